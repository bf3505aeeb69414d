import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createOfflineAnalyst, openThread, resumeThread } from '../../src/agent/index.ts';
import {
  createDockerBackend,
  createSandboxWithBackend,
  type SandboxOptions,
  type SandboxSession,
} from '../../src/sandbox/index.ts';
import { readTrace } from '../../src/trace/reader.ts';
import { useTempDirs } from '../support/temp-dirs.ts';

/**
 * Regression: the library listed a run folder inside its workspace
 * (`openThread({ workspaceDir: w, outDir: w/run })`) as data: its trace,
 * artifacts and reports were hashed as inputs, copied into the sandbox and
 * profiled, and a resumed thread saw different inputs. The CLI already left
 * its own output out; now the library does too.
 */

const tempDirs = useTempDirs();

/** Every file the kernel can reach: its working directory, and the inputs mount. */
const listEverything = [
  'import os',
  "print(sorted(os.path.join(d, f) for d, _, fs in os.walk('.') for f in fs))",
  "print(sorted(os.path.join(d, f) for d, _, fs in os.walk('/mnt/inputs') for f in fs))",
].join('\n');

describe('a thread whose run folder lies inside its workspace', () => {
  it.each(['volume', 'bind'] as const)(
    'records only the data files as inputs, and the kernel never sees the run folder (%s)',
    async (inputTransfer) => {
      const workspaceDir = await tempDirs.make('datalyst-outdir-inside-');
      // Readable by the sandbox user, so that a bind mount is possible.
      await chmod(workspaceDir, 0o755);
      await writeFile(
        path.join(workspaceDir, 'sales.csv'),
        'month,region,revenue\n1,North,10\n1,South,20\n2,North,30\n2,South,5\n',
      );
      await mkdir(path.join(workspaceDir, 'more'));
      await writeFile(path.join(workspaceDir, 'more', 'costs.csv'), 'month,cost\n1,4\n2,6\n');
      const outDir = path.join(workspaceDir, 'run');
      const backend = createDockerBackend({ inputTransfer });
      const sessions: SandboxSession[] = [];
      const opened: SandboxOptions[] = [];
      const recording = async (options: SandboxOptions) => {
        opened.push(options);
        const session = await createSandboxWithBackend(backend, options);
        sessions.push(session);
        return session;
      };

      const thread = await openThread({
        workspaceDir,
        outDir,
        model: createOfflineAnalyst(),
        createSandbox: recording,
      });
      const first = await thread.ask('Which region has the higher revenue?').result;
      expect(first.termination.reason).toBe('answered');
      const second = await thread.ask('Now by month.').result;
      expect(second.termination.reason).toBe('answered');
      const session = sessions[0];
      if (session === undefined) throw new Error('no session was opened');
      // After two turns wrote their records into the run folder.
      const seen = await session.execute(listEverything);
      await thread.close();

      expect(opened.map((options) => options.excludeDirs)).toEqual([['run']]);
      expect(seen.status).toBe('ok');
      expect(seen.stdout.text).toBe(
        "['./more/costs.csv', './sales.csv']\n['/mnt/inputs/more/costs.csv', '/mnt/inputs/sales.csv']\n",
      );

      const resumed = await resumeThread(outDir, { model: createOfflineAnalyst(), createSandbox: recording });
      await resumed.close();
      const { records } = await readTrace(path.join(outDir, 'trace.jsonl'));
      const start = records[0];
      if (start?.type !== 'run-start') throw new Error('no run-start');
      expect(start.workspace.files.map((file) => file.path)).toEqual(['more/costs.csv', 'sales.csv']);
      const profiled = records.flatMap((record) =>
        record.type === 'workspace-profile' ? [record.profile.files.map((file) => file.path)] : [],
      );
      expect(profiled).toEqual([['more/costs.csv', 'sales.csv']]);
      // Resumed after two turns wrote into the run folder, the workspace is the same: no "changed" warning.
      const notices = records.flatMap((record) => (record.type === 'notice' ? [record.text] : []));
      expect(notices.filter((text) => text.includes('workspace changed'))).toEqual([]);
      expect(sessions).toHaveLength(1);
    },
  );
});
