import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSandbox, type SandboxSession } from '../../src/sandbox/index.ts';

/**
 * Eight sessions running cells at the same time on a 2-core machine: every
 * cell succeeds and every output belongs to its own cell and session.
 */

const SESSIONS = 8;
const CELLS_PER_SESSION = 20;

describe('concurrent sessions', () => {
  it(`${SESSIONS} sessions × ${CELLS_PER_SESSION} cells at once: no failure, no crossed output`, async () => {
    const sessions: SandboxSession[] = [];
    try {
      sessions.push(...(await Promise.all(Array.from({ length: SESSIONS }, () => createSandbox()))));
      const failures: string[] = [];
      await Promise.all(
        sessions.map(async (session, sessionIndex) => {
          for (let cell = 0; cell < CELLS_PER_SESSION; cell += 1) {
            const token = `s${sessionIndex}-c${cell}-${randomBytes(6).toString('hex')}`;
            // State, stdout, stderr and the echoed value all carry the token.
            const result = await session.execute(
              `import sys\nhistory = globals().get('history', []) + ['${token}']\nprint('${token}')\nprint('${token}', file=sys.stderr)\nlen(history), '${token}'`,
            );
            const expected = `(${cell + 1}, '${token}')`;
            if (
              result.status !== 'ok' ||
              result.stdout.text !== `${token}\n` ||
              result.stderr.text !== `${token}\n` ||
              result.value !== expected
            ) {
              failures.push(
                `session ${sessionIndex} cell ${cell}: ${result.status} ${JSON.stringify(result.stdout.text)} ${result.value}`,
              );
            }
          }
        }),
      );
      expect(failures).toEqual([]);
    } finally {
      await Promise.all(sessions.map((session) => session.close()));
    }
  });
});
