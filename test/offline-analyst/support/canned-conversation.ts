import { formatFirstMessage } from '../../../src/agent/first-message.ts';
import type { ChatMessage } from '../../../src/agent/language-model.ts';
import { offlineAnalystTurn } from '../../../src/agent/offline-analyst/index.ts';
import type { OfflineAnalystOptions } from '../../../src/agent/offline-analyst/index.ts';
import { stageOfCode } from '../../../src/agent/offline-analyst/stages.ts';
import type { ColumnProfile, FileProfile, WorkspaceProfile } from '../../../src/sandbox/workspace-profile.ts';
import { csvReadOptions } from '../../support/read-options.ts';

/**
 * Canned conversations for the planning tests: a workspace profile built by
 * hand, and a fake kernel that answers each cell with the kind of text the
 * real cells print (findings and a facts line), or with what a test wants
 * (an error, a restarted kernel, nothing).
 */

export function column(name: string, kind: ColumnProfile['kind'], dtype = 'object'): ColumnProfile {
  return { name, dtype, kind, missing: 0, unique: null, samples: [], min: null, max: null };
}

export function csvFile(name: string, columns: ColumnProfile[]): FileProfile {
  return {
    path: name,
    sizeBytes: 2048,
    format: 'csv',
    error: null,
    notes: [],
    tables: [
      {
        name: '',
        rows: 100,
        columns,
        columnsTruncated: false,
        read: csvReadOptions(),
        loadCode: `pd.read_csv(${JSON.stringify(name)})`,
      },
    ],
  };
}

export function unreadableFile(
  name: string,
  format: FileProfile['format'],
  error: string | null,
): FileProfile {
  return { path: name, sizeBytes: 512, format, error, notes: [], tables: [] };
}

export function firstMessage(instruction: string, files: FileProfile[]): string {
  const profile: WorkspaceProfile = { files, truncated: false };
  return formatFirstMessage(instruction, profile);
}

/** What the fake kernel prints for a cell of a given step. */
export type CannedKernel = (stage: string, call: number) => string;

export interface CannedFacts {
  tables?: number;
  unique?: number;
  focus?: string[];
  kinds?: Record<string, number>;
  failed?: Array<[string, string]>;
}

/** A kernel whose cells all succeed, printing one finding and the given workspace facts. */
export function healthyKernel(facts: CannedFacts): CannedKernel {
  return (stage) => {
    const workspace = ['load', 'load-fallback', 'relations'].includes(stage)
      ? { failed: [], tables: 1, unique: 1, focus: ['data.csv'], kinds: { number: 3, category: 1 }, ...facts }
      : {};
    return `Some output of ${stage}.\n\nFindings:\n- ${stage} found 42 things (12.5%).\n\nfacts: ${JSON.stringify({ stage, ...workspace })}`;
  };
}

export interface CannedRun {
  stages: string[];
  turns: string[];
  messages: ChatMessage[];
  answer: string | null;
}

/** Drives the analyst with a fake kernel until it answers (or 40 turns, which would be a loop). */
export function runCanned(
  first: string,
  kernel: CannedKernel,
  options: { role?: 'execute' | 'user'; analyst?: OfflineAnalystOptions } = {},
): CannedRun {
  const messages: ChatMessage[] = [{ role: 'user', content: first }];
  const stages: string[] = [];
  const turns: string[] = [];
  for (let turn = 0; turn < 40; turn += 1) {
    const text = offlineAnalystTurn({ messages }, options.analyst);
    turns.push(text);
    messages.push({ role: 'assistant', content: text });
    const answer = /<Answer>([\s\S]*)<\/Answer>/.exec(text)?.[1];
    if (answer !== undefined) return { stages, turns, messages, answer: answer.trim() };
    const stage = stageOfCode(/<Code>([\s\S]*)<\/Code>/.exec(text)?.[1] ?? '') ?? 'unknown';
    stages.push(stage);
    const output = kernel(stage, stages.filter((seen) => seen === stage).length);
    messages.push(
      options.role === 'user'
        ? { role: 'user', content: `<Execute>\n${output}\n</Execute>` }
        : { role: 'execute', content: output },
    );
  }
  return { stages, turns, messages, answer: null };
}
