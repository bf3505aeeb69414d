import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, formatCellOutput, type SandboxSession } from '../../src/sandbox/index.ts';

/**
 * The kernel runs cells like a notebook: state persists, the last expression
 * is echoed, figures/charts/tables are captured, errors are results.
 */

let session: SandboxSession;

beforeAll(async () => {
  session = await createSandbox();
});

afterAll(async () => {
  await session?.close();
});

describe('a persistent kernel', () => {
  it('keeps variables and imports from cell to cell', async () => {
    const first = await session.execute('import math\nradius = 2');
    expect(first.status).toBe('ok');
    const second = await session.execute('area = math.pi * radius ** 2\nprint(round(area, 3))');
    expect(second.status).toBe('ok');
    expect(second.stdout.text).toBe('12.566\n');
  });

  it("echoes the last expression's repr, like a notebook", async () => {
    const result = await session.execute('values = [3, 1, 2]\nsorted(values)');
    expect(result.value).toBe('[1, 2, 3]');
    expect(result.stdout.text).toBe('');
    expect(formatCellOutput(result)).toBe('[1, 2, 3]');
  });

  it('echoes nothing for a trailing semicolon, an assignment or None', async () => {
    expect((await session.execute('len(values);')).value).toBeNull();
    expect((await session.execute('y = 5')).value).toBeNull();
    expect((await session.execute('print("x")')).value).toBeNull();
  });

  it('supports top-level await', async () => {
    const result = await session.execute('import asyncio\nawait asyncio.sleep(0)\n"awaited"');
    expect(result.value).toBe("'awaited'");
  });

  it('reports an exception as a result with name, value and a traceback without kernel frames', async () => {
    const result = await session.execute(
      'def divide(a, b):\n    return a / b\nprint("before")\ndivide(1, 0)',
    );
    expect(result.status).toBe('error');
    expect(result.stdout.text).toBe('before\n');
    expect(result.error?.name).toBe('ZeroDivisionError');
    expect(result.error?.value).toBe('division by zero');
    const traceback = result.error?.traceback ?? '';
    expect(traceback).toMatch(/^Traceback \(most recent call last\):\n/);
    expect(traceback).toContain('line 4, in <module>');
    expect(traceback).toContain('line 2, in divide');
    expect(traceback).toContain('    return a / b');
    expect(traceback).not.toMatch(/worker\.py|supervisor\.py|datalyst/);
    // Printed to stderr as a script would.
    expect(result.stderr.text).toContain('ZeroDivisionError: division by zero');
    expect(formatCellOutput(result)).toMatch(/^before\n\[Error\]:\nTraceback/);
  });

  it('reports a syntax error with the offending line', async () => {
    const result = await session.execute('x = (1,\nprint(x)');
    expect(result.status).toBe('error');
    expect(result.error?.name).toBe('SyntaxError');
    expect(result.error?.traceback).toContain('x = (1,');
  });

  it('treats sys.exit(0) as a normal end and a non-zero exit as an error, without killing the kernel', async () => {
    expect((await session.execute('import sys\nprint("a")\nsys.exit(0)\nprint("b")')).stdout.text).toBe(
      'a\n',
    );
    const failed = await session.execute('sys.exit(3)');
    expect(failed.status).toBe('error');
    expect(failed.error?.name).toBe('SystemExit');
    expect((await session.execute('radius')).value).toBe('2');
  });

  it('captures a figure the code never saved or showed, then closes it', async () => {
    const result = await session.execute(
      'import matplotlib.pyplot as plt\nplt.figure(figsize=(4, 3))\nplt.plot([1, 2, 3], [2, 4, 1])\nplt.title("中文标题 chart")',
    );
    expect(result.status).toBe('ok');
    expect(result.figures).toHaveLength(1);
    const figure = result.figures[0]!;
    expect(figure.mimeType).toBe('image/png');
    expect(Buffer.from(figure.dataBase64, 'base64').subarray(1, 4).toString()).toBe('PNG');
    expect(figure.widthPx).toBeGreaterThan(200);
    // CJK glyphs render through the WenQuanYi fallback: matplotlib warns about none missing.
    expect(result.stderr.text).not.toContain('missing from font');
    const after = await session.execute('len(plt.get_fignums())');
    expect(after.value).toBe('0');
  });

  it('captures figures at plt.show() without closing them (as in a script) and lists savefig files', async () => {
    const result = await session.execute(
      [
        'fig, ax = plt.subplots()',
        'ax.bar(["a", "b"], [3, 5])',
        'plt.show()',
        'plt.savefig("bars.png")',
        'plt.figure()',
        'plt.plot([1, 2])',
      ].join('\n'),
    );
    // The bar chart once (unchanged after show), the line plot at the end of the cell.
    expect(result.figures).toHaveLength(2);
    expect(result.files).toEqual([{ path: 'bars.png', change: 'created', sizeBytes: expect.any(Number) }]);
    // Saved with plt.savefig after show, the file still holds the bars (after a closing
    // show, plt.savefig would save a new, blank figure).
    const saved = await session.execute(
      'import matplotlib.image as mpimg\npixels = mpimg.imread("bars.png")[..., :3]\nbool((pixels < 0.5).any())',
    );
    expect(saved.value).toBe('True');
    const again = await session.execute('fig.savefig("bars.png", dpi=50)');
    expect(again.files.map((file) => [file.path, file.change])).toEqual([['bars.png', 'modified']]);
    expect(again.figures).toHaveLength(0);
  });

  it('captures a shown figure again when the cell changes it afterwards', async () => {
    const result = await session.execute('plt.plot([1, 2])\nplt.show()\nplt.plot([2, 1])');
    expect(result.figures).toHaveLength(2);
    expect(result.figures[0]!.dataBase64).not.toBe(result.figures[1]!.dataBase64);
  });

  it('does not capture an empty figure left open by pandas plotting', async () => {
    const result = await session.execute(
      'import pandas as pd\nplt.figure()\npd.Series([1, 2, 3]).plot(kind="bar")\nplt.close()',
    );
    expect(result.figures).toHaveLength(0);
  });

  it('captures an Altair chart and a vega-lite dict as charts', async () => {
    const altair = await session.execute(
      'import altair as alt\nframe = pd.DataFrame({"x": [1, 2], "y": [3, 4]})\nalt.Chart(frame).mark_line().encode(x="x", y="y")',
    );
    expect(altair.status).toBe('ok');
    expect(altair.charts).toHaveLength(1);
    const spec = altair.charts[0]!.spec;
    expect(String(spec['$schema'])).toContain('vega-lite');
    // Altair 5 writes the mark as an object, Altair 4 (a local backend's Python) as a string.
    const mark = spec['mark'];
    expect(typeof mark === 'string' ? mark : (mark as { type?: unknown }).type).toBe('line');
    expect(altair.value).toBeNull();

    const plain = await session.execute(
      'display({"$schema": "https://vega.github.io/schema/vega-lite/v5.json", "mark": "bar", "data": {"values": [{"a": 1}]}})',
    );
    expect(plain.charts).toHaveLength(1);
    expect(plain.charts[0]!.spec['mark']).toBe('bar');
  });

  it('turns a displayed DataFrame into a capped table and keeps its text for the model', async () => {
    const result = await session.execute(
      'wide = pd.DataFrame({f"c{i}": range(100) for i in range(40)})\nwide["label"] = "x"\nwide.loc[0, "c0"] = None\nwide',
    );
    expect(result.tables).toHaveLength(1);
    const table = result.tables[0]!;
    expect(table.totalRows).toBe(100);
    expect(table.totalColumns).toBe(41);
    expect(table.truncated).toBe(true);
    expect(table.rows.length).toBeLessThan(100);
    expect(table.columns.length).toBeLessThan(41);
    expect(table.rows[0]![0]).toBeNull();
    expect(table.rows[1]![0]).toBe(1);
    expect(result.value).toContain('[100 rows x 41 columns]');

    const shown = await session.execute(
      'display(pd.DataFrame({"a": [1.5, float("nan")], "b": [True, False]}))\n"done"',
    );
    expect(shown.tables).toHaveLength(1);
    expect(shown.tables[0]!.rows).toEqual([
      [1.5, true],
      [null, false],
    ]);
    expect(shown.stdout.text).toContain('a      b');
  });

  it('lets a cell write next to the inputs and reports created files', async () => {
    const result = await session.execute(
      'import os\nos.makedirs("out/sub", exist_ok=True)\nwith open("out/sub/result.csv", "w") as f:\n    f.write("a,b\\n1,2\\n")',
    );
    expect(result.files).toEqual([{ path: 'out/sub/result.csv', change: 'created', sizeBytes: 8 }]);
    const [file] = await session.readFiles(['out/sub/result.csv']);
    expect(Buffer.from(file!.bytes).toString()).toBe('a,b\n1,2\n');
  });
});
