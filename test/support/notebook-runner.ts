import { chmod, cp, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { notebookSchema } from '../../src/report/index.ts';
import type { Notebook } from '../../src/report/index.ts';
import { runnerImageTag } from '../../src/sandbox/index.ts';

// nbclient has no CLI of its own (`python3 -m nbclient` is not one); this is its documented API.
// nbformat.validate checks the notebook Datalyst wrote against the official nbformat v4 JSON schema
// with Jupyter's own validator (nbformat.read only warns): the zod schema in src/report stays the
// small runtime check of what the code needs, the official one is the test's.
const executeNotebookPython = `
import nbformat
from nbclient import NotebookClient
notebook = nbformat.read('analysis.ipynb', as_version=4)
nbformat.validate(notebook)
NotebookClient(notebook, timeout=300, kernel_name='python3', resources={'metadata': {'path': '.'}}).execute()
nbformat.write(notebook, 'executed.ipynb')
`;

/** Runs the notebook in a fresh container of the runner image; returns the executed notebook. */
export async function executeInRunner(workDir: string, notebookPath: string): Promise<Notebook> {
  await cp(notebookPath, join(workDir, 'analysis.ipynb'));
  // The container runs as uid 1000; the copy must be writable for it (cells write next to the data).
  await chmod(workDir, 0o777);
  for (const name of await readdir(workDir)) await chmod(join(workDir, name), 0o666);
  await execa(
    'docker',
    [
      'run',
      '--rm',
      '--network',
      'none',
      '--user',
      '1000:1000',
      '-v',
      `${workDir}:/home/analyst/work`,
      '-w',
      '/home/analyst/work',
      '-e',
      'HOME=/home/analyst',
      await runnerImageTag(),
      'python3',
      '-c',
      executeNotebookPython,
    ],
    { timeout: 600_000 },
  );
  return notebookSchema.parse(JSON.parse(await readFile(join(workDir, 'executed.ipynb'), 'utf8')));
}

function joined(text: string | string[]): string {
  return Array.isArray(text) ? text.join('') : text;
}

/** The stdout or the echoed value of the code cell `outputId` of a notebook, trimmed. */
export function cellText(notebook: Notebook, outputId: string, kind: 'stdout' | 'value'): string {
  const cell = notebook.cells.find((candidate) => candidate.id === outputId);
  if (cell?.cell_type !== 'code') throw new Error(`No code cell ${outputId}`);
  return cell.outputs
    .map((output) => {
      if (kind === 'stdout' && output.output_type === 'stream' && output.name === 'stdout')
        return joined(output.text);
      if (kind === 'value' && output.output_type === 'execute_result')
        return joined(output.data['text/plain'] as string | string[]);
      return '';
    })
    .join('')
    .trim();
}
