import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createSandbox,
  mergeProfileParts,
  type FileProfile,
  type SandboxSession,
  type WorkspaceProfile,
} from '../../src/sandbox/index.ts';
import { hashTree } from '../support/hash-tree.ts';

/**
 * The workspace: copied into the sandbox (the user's files are never
 * written), read back safely, and profiled inside the sandbox.
 */

const studentLoanDir = join(import.meta.dirname, '..', 'fixtures', 'deepanalyze-student-loan', 'data');
const messyDir = join(import.meta.dirname, '..', '..', 'workspace-examples', 'messy');

// test/sandbox-local/ runs this file again with the local backend, which copies the
// workspace (no read-only mount) and uses the host's Python (Debian bookworm: no charset_normalizer).
const localBackend = process.env['DATALYST_SANDBOX'] === 'local';

const temporaryDirs: string[] = [];
async function temporaryWorkspace(source?: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'datalyst-workspace-'));
  temporaryDirs.push(dir);
  if (source) await cp(source, dir, { recursive: true });
  return dir;
}

afterAll(async () => {
  for (const dir of temporaryDirs) await rm(dir, { recursive: true, force: true });
});

describe("the user's files", () => {
  it('keep their SHA-256 after cells that overwrite, truncate and delete them', async () => {
    const workspace = await temporaryWorkspace(studentLoanDir);
    await mkdir(join(workspace, 'nested'));
    await writeFile(join(workspace, 'nested', 'notes.csv'), 'a,b\n1,2\n');
    const before = await hashTree(workspace);
    expect(before.size).toBe(22);

    const session = await createSandbox({ workspaceDir: workspace });
    try {
      const listing = await session.execute(
        'import os\nsorted(os.path.join(d, f) for d, _, fs in os.walk(".") for f in fs)',
      );
      expect(listing.value).toContain("'./nested/notes.csv'");
      expect(listing.value).toContain("'./student_loan.sqlite'");

      const hostile = await session.execute(
        [
          'import os, shutil, sqlite3',
          'for name in os.listdir("."):',
          '    if name.endswith(".csv"):',
          '        open(name, "w").write("overwritten")',
          '    elif name.endswith(".xlsx"):',
          '        os.remove(name)',
          'with open("person.csv", "r+") as f:',
          '    f.truncate(0)',
          // SQLite opens a mounted input read-only (see src/sandbox/README.md).
          'try:',
          '    sqlite3.connect("student_loan.sqlite").execute("DROP TABLE person")',
          'except sqlite3.OperationalError as error:',
          '    print(error)',
          'shutil.rmtree("nested")',
          'os.chmod("bool.csv", 0)',
          'sorted(os.listdir("."))',
        ].join('\n'),
      );
      expect(hostile.status).toBe('ok');
      // A mounted input is read-only to SQLite; the local backend's copy is the cell's to change.
      if (!localBackend) expect(hostile.stdout.text).toContain('readonly database');
      expect(hostile.value).not.toContain('.xlsx');
      // Overwritten inputs are files of the working directory now: the cell wrote them.
      expect(hostile.files.map((file) => file.path)).toContain('enrolled.csv');
      const check = await session.execute('open("enrolled.csv").read()');
      expect(check.value).toBe("'overwritten'");
    } finally {
      await session.close();
    }
    expect(await hashTree(workspace)).toEqual(before);
  });

  it('are copied without following symbolic links out of the workspace', async () => {
    const workspace = await temporaryWorkspace();
    await writeFile(join(workspace, 'data.csv'), 'a\n1\n');
    await symlink('/etc/hostname', join(workspace, 'host-file'));
    await symlink('/etc', join(workspace, 'host-dir'));
    const session = await createSandbox({ workspaceDir: workspace });
    try {
      const result = await session.execute('import os\nsorted(os.listdir("."))');
      expect(result.value).toBe("['data.csv']");
    } finally {
      await session.close();
    }
  });
});

describe('reading files back', () => {
  let session: SandboxSession;

  beforeAll(async () => {
    session = await createSandbox();
    const setup = await session.execute(
      [
        'import os',
        'open("ok.txt", "w").write("fine")',
        'os.makedirs("sub", exist_ok=True)',
        'open("sub/inner.txt", "w").write("inner")',
        'os.symlink("/etc/passwd", "link.txt")',
        'os.symlink("/etc", "linkdir")',
        'os.mkfifo("pipe")',
        'open("big.bin", "wb").write(b"x" * 5000)',
      ].join('\n'),
    );
    expect(setup.status).toBe('ok');
  });

  afterAll(async () => {
    await session?.close();
  });

  it('returns regular files and refuses links, folders, FIFOs and paths outside the working directory', async () => {
    const files = await session.readFiles([
      'ok.txt',
      'sub/inner.txt',
      'link.txt',
      'linkdir/passwd',
      'sub',
      'pipe',
      '../etc/passwd',
      '/etc/passwd',
      'sub/../ok.txt',
      'missing.txt',
      'ok.txt\0.png',
    ]);
    expect(files.map((file) => [file.path, Buffer.from(file.bytes).toString()])).toEqual([
      ['ok.txt', 'fine'],
      ['sub/inner.txt', 'inner'],
    ]);
  });

  it('keeps to the byte and count caps', async () => {
    const capped = await session.readFiles(['ok.txt', 'big.bin', 'sub/inner.txt'], { maxTotalBytes: 1000 });
    expect(capped.map((file) => file.path)).toEqual(['ok.txt', 'sub/inner.txt']);
    const counted = await session.readFiles(['ok.txt', 'sub/inner.txt', 'big.bin'], { maxFiles: 1 });
    expect(counted.map((file) => file.path)).toEqual(['ok.txt']);
  });
});

describe('the workspace profile', () => {
  function file(profile: WorkspaceProfile, path: string): FileProfile {
    const found = profile.files.find((candidate) => candidate.path === path);
    if (!found) throw new Error(`no profile for ${path}`);
    return found;
  }

  it('describes the messy files sensibly: delimiter, encoding, header row, every sheet', async () => {
    const workspace = await temporaryWorkspace(messyDir);
    await writeFile(join(workspace, 'corrupt.xlsx'), 'PK\u0003\u0004 not really a workbook');
    const session = await createSandbox({ workspaceDir: workspace });
    try {
      await session.execute('pd = "my own variable"');
      const profile = await session.profileWorkspace();

      const german = file(profile, 'weird_head_padding.csv');
      expect(german.format).toBe('csv');
      expect(german.error).toBeNull();
      const germanTable = german.tables[0]!;
      expect(germanTable.read).toMatchObject({
        delimiter: ';',
        encoding: 'utf-8',
        skipRows: 11,
        thousands: '.',
      });
      expect(germanTable.read.naValues).toContain('.');
      expect(germanTable.read.naValues.some((marker) => marker.includes('\u00a0'))).toBe(true);
      expect(germanTable.columns.map((column) => column.name).slice(1, 4)).toEqual(['1985', '1993', '2000']);
      const y2010 = germanTable.columns.find((column) => column.name === '2010')!;
      expect(y2010.kind).toBe('integer');
      expect(Number(y2010.max)).toBeGreaterThan(1000); // '2.830' read as 2830, not 2.83
      expect(germanTable.rows).toBeGreaterThan(40);
      expect(germanTable.rows).toBeLessThan(80); // the notes below the table are not rows
      expect(germanTable.loadCode).toMatch(/^pd\.read_csv\('weird_head_padding\.csv', sep=';', skiprows=11/);

      const spanish = file(profile, 'spanish_chars.csv');
      const spanishTable = spanish.tables[0]!;
      expect(spanishTable.read).toMatchObject({
        delimiter: ',',
        // charset_normalizer's answer; it decodes this file's bytes (none in 0x80–0x9f) exactly as
        // latin-1 does, which is the fallback where no detector is installed (the local backend here).
        encoding: localBackend ? expect.stringMatching(/^(cp1252|latin-1)$/) : 'cp1252',
        skipRows: 0,
        thousands: ',',
      });
      expect(spanishTable.columns.map((column) => column.name)).toContain('Descripción');
      expect(spanishTable.columns.find((column) => column.name === 'Gasto total 2011')?.kind).toBe('number');
      // 114 rows: the row of commas and the source note ("Fuente: …" in GF_ID) below them are no data.
      expect(spanishTable.rows).toBe(114);
      expect(spanish.notes).toContain('Lines below the 114 data rows (a footer or notes) are left out.');
      expect(JSON.stringify(spanishTable.sampleRows)).not.toContain('Fuente');
      expect(spanishTable.columns.find((column) => column.name === 'GF_ID')?.unique).toBe(3);

      const workbook = file(profile, 'large.xlsx');
      expect(workbook.format).toBe('excel');
      expect(workbook.tables.map((table) => table.name)).toEqual(['Report', 'data', 'criteria']);
      const data = workbook.tables[1]!;
      expect(data.read.headerRow).toBe(2);
      expect(data.columns[0]).toMatchObject({ name: 'RptDate', kind: 'datetime' });
      expect(workbook.tables[0]!.columns[0]!.name).toBe('SERIES');

      const corrupt = file(profile, 'corrupt.xlsx');
      expect(corrupt.error).toBeTruthy();
      expect(corrupt.tables).toEqual([]);
      expect(file(profile, 'README.md').format).toBe('text');

      // Every loadCode loads the table the profile describes.
      for (const table of [germanTable, spanishTable, ...workbook.tables]) {
        const loaded = await session.execute(`import pandas\n(lambda pd: ${table.loadCode}.shape)(pandas)`);
        expect(loaded.value).toBe(`(${table.rows}, ${table.columns.length})`);
      }
      // The profile ran in its own namespace.
      expect((await session.execute('pd')).value).toBe("'my own variable'");
    } finally {
      await session.close();
    }
  });

  it('profiles in parts that together are the whole profile, each file in one part', async () => {
    const sessions = await Promise.all([
      createSandbox({ workspaceDir: studentLoanDir }),
      createSandbox({ workspaceDir: studentLoanDir }),
    ]);
    try {
      const [whole, ...parts] = await Promise.all([
        sessions[0]!.profileWorkspace(),
        sessions[0]!.profileWorkspace({ part: { index: 0, count: 2 } }),
        sessions[1]!.profileWorkspace({ part: { index: 1, count: 2 } }),
      ]);
      expect(mergeProfileParts(parts)).toEqual(whole);
      const [first, second] = parts.map((part) => part.files.map((entry) => entry.path));
      expect(first!.filter((name) => second!.includes(name))).toEqual([]);
      // Each format's bytes are shared out evenly (workbooks are slower per byte than CSV): the parts differ
      // by no more than that format's largest file.
      for (const format of ['csv', 'excel'] as const) {
        const sizes = parts.map((part) =>
          part.files.filter((entry) => entry.format === format).map((entry) => entry.sizeBytes),
        );
        const [first, second] = sizes.map((list) => list.reduce((sum, size) => sum + size, 0));
        expect(Math.abs(first! - second!)).toBeLessThanOrEqual(Math.max(...sizes.flat()));
        expect(sizes.every((list) => list.length > 0)).toBe(true);
      }
      await expect(sessions[0]!.profileWorkspace({ part: { index: 2, count: 2 } })).rejects.toThrow(
        RangeError,
      );
    } finally {
      await Promise.all(sessions.map((session) => session.close()));
    }
  });

  it('describes the student-loan workspace: CSV, Excel and every SQLite table', async () => {
    const session = await createSandbox({ workspaceDir: studentLoanDir });
    try {
      const profile = await session.profileWorkspace();
      expect(profile.truncated).toBe(false);
      expect(profile.files).toHaveLength(21);
      expect(profile.files.every((entry) => entry.error === null)).toBe(true);
      const enrolled = file(profile, 'enrolled.csv').tables[0]!;
      expect(enrolled.rows).toBe(1194);
      expect(enrolled.loadCode).toBe("pd.read_csv('enrolled.csv')");
      expect(enrolled.columns.map((column) => [column.name, column.dtype, column.kind])).toEqual([
        ['name', 'object', 'text'],
        ['school', 'object', 'category'],
        ['month', 'int64', 'integer'],
      ]);
      expect(enrolled.columns[2]).toMatchObject({ min: '1', max: '15', missing: 0, unique: 15 });
      const sqlite = file(profile, 'student_loan.sqlite');
      expect(sqlite.format).toBe('sqlite');
      expect(sqlite.tables).toHaveLength(10);
      expect(sqlite.tables.find((table) => table.name === 'enrolled')?.rows).toBe(1194);
      const excel = file(profile, 'unemployed.xlsx');
      expect(excel.tables[0]).toMatchObject({ name: 'Sheet1', rows: 98 });
      expect(excel.tables[0]!.loadCode).toBe("pd.read_excel('unemployed.xlsx', sheet_name='Sheet1')");
      // Profiling wrote nothing into the working directory.
      const after = await session.execute('1');
      expect(after.files).toEqual([]);
    } finally {
      await session.close();
    }
  });

  it('counts the lines of a text file, one line as one', async () => {
    const workspace = await temporaryWorkspace();
    await writeFile(join(workspace, 'one.txt'), 'Generate a data science report.');
    await writeFile(join(workspace, 'two.md'), '# Notes\nSecond line\n');
    const session = await createSandbox({ workspaceDir: workspace });
    try {
      const profile = await session.profileWorkspace();
      expect(file(profile, 'one.txt')).toMatchObject({ format: 'text', notes: ['A text file of 1 line.'] });
      expect(file(profile, 'two.md')).toMatchObject({ format: 'text', notes: ['A text file of 2 lines.'] });
    } finally {
      await session.close();
    }
  });

  it("says why a binary 'CSV' is not read in words, without Datalyst's exception class", async () => {
    const workspace = await temporaryWorkspace();
    // 1000 bytes of noise (a fixed sequence), NULs among them: no encoding makes text of it.
    let seed = 7;
    const noise = Buffer.from(
      Array.from({ length: 1000 }, () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) >> 23),
    );
    await writeFile(join(workspace, 'bin.csv'), noise);
    const session = await createSandbox({ workspaceDir: workspace });
    try {
      const profile = await session.profileWorkspace();
      expect(file(profile, 'bin.csv').error).toBe(
        'Binary data, not text (it holds NUL bytes and decodes in no text encoding)',
      );
    } finally {
      await session.close();
    }
  });
});
