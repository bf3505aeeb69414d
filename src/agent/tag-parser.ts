import type { StepKind } from '../trace/schema.ts';
import { stripCodeFence } from './code-fence.ts';

/**
 * An incremental parser for the tag protocol. Model text arrives in chunks of
 * any size; the parser turns it into text deltas (each labelled with the tag it
 * belongs to) and finished steps, without ever waiting for the whole reply.
 *
 * Rules, chosen for what real models emit:
 * - Tags are matched case-insensitively (`<code>` is `<Code>`); steps carry the
 *   canonical kind.
 * - Text outside any tag is a `text` step (prose before the first tag); text
 *   that is only whitespace is dropped.
 * - Inside `<Code>` only `</Code>` closes the step, and only when it is not
 *   inside an open ``` fence: `print("</Code>")` in fenced code stays code.
 *   Other tags inside code are code text.
 * - `<Ask>` is the model's question to the user (DeepAnalyze's newer
 *   protocol); it is read like Answer.
 * - Inside Analyze/Understand/Answer/Ask, an opening tag of another step closes the
 *   current one (models forget closing tags); so does any closing tag.
 * - `<Execute>` is the system's tag. A model that writes it is inventing
 *   results; the parser reports it as an `execute` step so the caller can drop
 *   it (the loop stops reading the reply there). Inside a `<Code>` that has no
 *   `</Code>` but whose ``` fence is closed, `<Execute>` ends the code step
 *   (`closed: false`), as DeepAnalyze's own server treats it.
 * - A stream that ends inside a tag yields that step with `closed: false`.
 */

export type ParsedStepKind = StepKind | 'execute';

export interface ParsedStep {
  kind: ParsedStepKind;
  /** The step's text, trimmed. For `code`: the runnable code, fence stripped. */
  text: string;
  /** The text exactly as written between the tags. */
  raw: string;
  /** False when the step was not ended by its own closing tag (stream end, or the next tag). */
  closed: boolean;
  /** For `code`: true when a ``` fence was opened and never closed. */
  fenceOpen: boolean;
}

export type ParserEvent =
  | { type: 'text-delta'; kind: ParsedStepKind; text: string }
  /** `tagOffset`: where the opening tag starts in all the text pushed (for steps a tag opened). */
  | { type: 'step-start'; kind: ParsedStepKind; tagOffset?: number }
  | { type: 'step-end'; step: ParsedStep };

const tagNames: Readonly<Record<string, Exclude<ParsedStepKind, 'text'>>> = {
  analyze: 'analyze',
  understand: 'understand',
  code: 'code',
  answer: 'answer',
  ask: 'ask',
  execute: 'execute',
};

const canonicalTagNames: Readonly<Record<Exclude<ParsedStepKind, 'text'>, string>> = {
  analyze: 'Analyze',
  understand: 'Understand',
  code: 'Code',
  answer: 'Answer',
  ask: 'Ask',
  execute: 'Execute',
};

/** The canonical opening and closing tag of a kind, e.g. `<Code>` / `</Code>`. */
export function tagOf(kind: Exclude<ParsedStepKind, 'text'>): { open: string; close: string } {
  const name = canonicalTagNames[kind];
  return { open: `<${name}>`, close: `</${name}>` };
}

// The longest tag is `</Understand>` (13 characters).
const longestTagLength = 13;
const tagPattern = /^<(\/?)([a-zA-Z]+)>/;

interface Tag {
  closing: boolean;
  kind: Exclude<ParsedStepKind, 'text'>;
  length: number;
}

/** Reads a tag at the start of `text`; `partial` when more text is needed to decide. */
function readTag(text: string): Tag | 'partial' | null {
  const match = tagPattern.exec(text);
  if (match !== null) {
    const kind = tagNames[(match[2] ?? '').toLowerCase()];
    return kind === undefined ? null : { closing: match[1] === '/', kind, length: match[0].length };
  }
  // Could this still become a tag once more text arrives?
  if (text.length >= longestTagLength) return null;
  const prefix = /^<\/?([a-zA-Z]*)$/.exec(text);
  if (prefix === null) return null;
  const partialName = (prefix[1] ?? '').toLowerCase();
  return Object.keys(tagNames).some((name) => name.startsWith(partialName)) ? 'partial' : null;
}

/** Counts ``` fence lines; an odd count means the fence is open. */
function isFenceOpen(code: string): boolean {
  let fences = 0;
  for (const line of code.split('\n')) {
    if (line.trimStart().startsWith('```')) fences += 1;
  }
  return fences % 2 === 1;
}

/** True when the code holds a fence that was opened and closed again (and none is open now). */
export function hasClosedFence(code: string): boolean {
  let fences = 0;
  for (const line of code.split('\n')) {
    if (line.trimStart().startsWith('```')) fences += 1;
  }
  return fences >= 2 && fences % 2 === 0;
}

export interface TagParser {
  /** Feeds a chunk of streamed text; returns what it completed. */
  push(chunk: string): ParserEvent[];
  /** Ends the stream: flushes held-back text and closes an open step (`closed: false`). */
  end(): ParserEvent[];
}

export function createTagParser(): TagParser {
  let kind: ParsedStepKind = 'text';
  let stepRaw = '';
  let pending = '';
  /** Characters pushed before `pending`'s first one. */
  let consumedChars = 0;
  let ended = false;

  function emitText(text: string, events: ParserEvent[]): void {
    if (text.length === 0) return;
    if (kind === 'text' && stepRaw.length === 0 && text.trim().length === 0) {
      // Whitespace between tags is not a step; keep it out of the deltas too.
      return;
    }
    if (stepRaw.length === 0 && kind === 'text') events.push({ type: 'step-start', kind });
    stepRaw += text;
    events.push({ type: 'text-delta', kind, text });
  }

  function finishStep(closed: boolean, events: ParserEvent[]): void {
    if (kind === 'text') {
      if (stepRaw.trim().length > 0) {
        events.push({
          type: 'step-end',
          step: { kind, text: stepRaw.trim(), raw: stepRaw, closed: true, fenceOpen: false },
        });
      }
    } else {
      const fenceOpen = kind === 'code' && isFenceOpen(stepRaw);
      const text = kind === 'code' ? stripCodeFence(stepRaw) : stepRaw.trim();
      events.push({ type: 'step-end', step: { kind, text, raw: stepRaw, closed, fenceOpen } });
    }
    kind = 'text';
    stepRaw = '';
  }

  function openStep(next: Exclude<ParsedStepKind, 'text'>, tagOffset: number, events: ParserEvent[]): void {
    kind = next;
    stepRaw = '';
    events.push({ type: 'step-start', kind, tagOffset });
  }

  /** Applies a tag; returns false when the tag is to be read as plain text. */
  function applyTag(tag: Tag, tagOffset: number, events: ParserEvent[]): boolean {
    if (kind === 'code') {
      if (tag.closing && tag.kind === 'code' && !isFenceOpen(stepRaw)) {
        finishStep(true, events);
        return true;
      }
      // DeepAnalyze ends a turn inside <Code> after a closed fence, then may invent the <Execute>:
      // that tag ends the code step (unclosed), as it would after </Code>.
      if (!tag.closing && tag.kind === 'execute' && hasClosedFence(stepRaw)) {
        finishStep(false, events);
        openStep(tag.kind, tagOffset, events);
        return true;
      }
      return false;
    }
    if (kind === 'text') {
      if (tag.closing) return false; // A stray closing tag outside any step is prose.
      finishStep(true, events);
      openStep(tag.kind, tagOffset, events);
      return true;
    }
    if (tag.closing) {
      finishStep(true, events);
      return true;
    }
    if (tag.kind === kind) return false; // `<Analyze>` inside Analyze: text, not a new step.
    finishStep(false, events);
    openStep(tag.kind, tagOffset, events);
    return true;
  }

  function consume(events: ParserEvent[], final: boolean): void {
    let text = pending;
    let textStart = consumedChars;
    pending = '';
    let plainStart = 0;
    let index = text.indexOf('<');
    while (index !== -1) {
      const tag = readTag(text.slice(index));
      if (tag === 'partial') {
        if (!final) {
          emitText(text.slice(plainStart, index), events);
          pending = text.slice(index);
          consumedChars = textStart + index;
          return;
        }
        break;
      }
      if (tag !== null) {
        emitText(text.slice(plainStart, index), events);
        if (applyTag(tag, textStart + index, events)) {
          text = text.slice(index + tag.length);
          textStart += index + tag.length;
          plainStart = 0;
          index = text.indexOf('<');
          continue;
        }
        // Not a tag here (e.g. `</Code>` inside a fence): it is text.
        emitText(text.slice(index, index + tag.length), events);
        text = text.slice(index + tag.length);
        textStart += index + tag.length;
        plainStart = 0;
        index = text.indexOf('<');
        continue;
      }
      index = text.indexOf('<', index + 1);
    }
    emitText(text.slice(plainStart), events);
    consumedChars = textStart + text.length;
  }

  return {
    push(chunk) {
      if (ended) throw new Error('TagParser.push after end()');
      const events: ParserEvent[] = [];
      pending += chunk;
      consume(events, false);
      return events;
    },
    end() {
      if (ended) return [];
      ended = true;
      const events: ParserEvent[] = [];
      consume(events, true);
      finishStep(false, events);
      return events;
    },
  };
}

/** Parses a whole reply at once. */
export function parseSteps(text: string): ParsedStep[] {
  const parser = createTagParser();
  return [...parser.push(text), ...parser.end()].flatMap((event) =>
    event.type === 'step-end' ? [event.step] : [],
  );
}
