import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type SandboxSession } from '../../src/sandbox/index.ts';

// Cell code runs as the same uid as the supervisor. Regression: it could open
// /proc/<supervisor>/fd/1 and write forged protocol lines that the host took
// for the kernel's answers.
describe('the kernel protocol cannot be forged from a cell', () => {
  let session: SandboxSession;
  beforeAll(async () => {
    session = await createSandbox({ limits: { cellTimeoutMs: 20_000 } });
  });
  afterAll(async () => {
    await session.close();
  });

  it("refuses the supervisor's stdout and environment to cell code", async () => {
    const result = await session.execute(
      [
        'import os, json',
        'outcomes = {}',
        "for name, mode in (('fd/1', 'w'), ('environ', 'r'), ('mem', 'r')):",
        '    try:',
        "        with open(f'/proc/{os.getppid()}/{name}', mode) as handle:",
        "            if mode == 'w':",
        '                handle.write(json.dumps({"type": "result", "id": 99, "forged": True}) + "\\n")',
        "        outcomes[name] = 'opened'",
        '    except OSError as error:',
        '        outcomes[name] = type(error).__name__',
        'print(outcomes)',
      ].join('\n'),
    );
    expect(result.status).toBe('ok');
    expect(result.stdout.text).not.toContain("'opened'");
    expect(result.stdout.text).toContain('PermissionError');
    const next = await session.execute('1 + 1');
    expect(next).toMatchObject({ status: 'ok', value: '2' });
  });
});
