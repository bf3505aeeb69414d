import { formatExecuteText, tagOf } from '../agent/index.ts';
import type { CellResult, StepKind } from '../index.ts';
import type { TurnEvent } from './api-schemas.ts';

/**
 * Turns a turn's events back into the text DeepAnalyze's server streams: the
 * model's tagged text (`<Analyze>…</Analyze>`, `<Code>…</Code>`, …) as it
 * comes, and after each cell its output as
 * "\n<Execute>\n```\n{output}\n```\n</Execute>\n" — the layout of
 * DeepAnalyze's chat API, which its clients parse.
 */
export class DeepAnalyzeText {
  #openTag: StepKind | null = null;

  /** The text this event adds to the reply ('' for events that add none). */
  next(event: TurnEvent): string {
    switch (event.type) {
      case 'text-delta': {
        const { tag, text } = event as unknown as { tag: StepKind; text: string };
        let out = '';
        if (tag !== this.#openTag) {
          out += this.#close();
          if (tag !== 'text') out += tagOf(tag).open;
          this.#openTag = tag;
        }
        return out + text;
      }
      case 'step-end': {
        const { kind, closed } = event as unknown as { kind: StepKind; closed: boolean };
        if (kind !== this.#openTag) return '';
        this.#openTag = null;
        return closed && kind !== 'text' ? tagOf(kind).close : '';
      }
      case 'execution-end': {
        const { result } = event as unknown as { result: CellResult };
        return `${this.#close()}\n<Execute>\n\`\`\`\n${formatExecuteText(result)}\n\`\`\`\n</Execute>\n`;
      }
      case 'turn-restart':
        // The model request broke and starts over: what streamed of it is void, and the text says so.
        this.#openTag = null;
        return '\n';
      default:
        return '';
    }
  }

  #close(): string {
    const open = this.#openTag;
    this.#openTag = null;
    return open === null || open === 'text' ? '' : tagOf(open).close;
  }
}
