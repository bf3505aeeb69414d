import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The DeepAnalyze student-loan run (github.com/ruc-datalab/DeepAnalyze,
 * example/analysis_on_student_loan, MIT): a real DeepAnalyze-8B transcript,
 * kept in the project's fixtures with its licence.
 */
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const studentLoanDir = path.join(repoRoot, 'test/fixtures/deepanalyze-student-loan');
export const studentLoanDataDir = path.join(studentLoanDir, 'data');

export interface StudentLoanTrajectory {
  /** The whole recorded transcript (model text and the system's <Execute> blocks). */
  transcript: string;
  /** What the model wrote between two <Execute> blocks: one entry per model turn (8). */
  modelTurns: string[];
  /** The recorded <Execute> contents, in order (7). */
  executeOutputs: string[];
  /** The instruction of the run. */
  instruction: string;
}

export function loadStudentLoanTrajectory(): StudentLoanTrajectory {
  const markdown = readFileSync(path.join(studentLoanDir, 'trajectory.md'), 'utf8');
  const start = markdown.indexOf('````text\n');
  const end = markdown.indexOf('\n````', start + 1);
  if (start === -1 || end === -1) throw new Error('trajectory.md: transcript block not found');
  const transcript = markdown.slice(start + '````text\n'.length, end);
  const modelTurns: string[] = [];
  const executeOutputs: string[] = [];
  let rest = transcript;
  for (;;) {
    const open = rest.indexOf('<Execute>');
    if (open === -1) break;
    const close = rest.indexOf('</Execute>', open);
    modelTurns.push(rest.slice(0, open));
    executeOutputs.push(rest.slice(open + '<Execute>'.length, close));
    rest = rest.slice(close + '</Execute>'.length);
  }
  modelTurns.push(rest);
  return { transcript, modelTurns, executeOutputs, instruction: 'Generate a data science report.' };
}
