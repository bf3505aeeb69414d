import MarkdownIt from 'markdown-it';
import type Token from 'markdown-it/lib/token.mjs';
import { h } from './dom.ts';
import type { AnswerGrounding } from './api.ts';
import { groundedText, segmentFinder } from './grounded-text.ts';

/** Only these links become links; any other scheme (javascript:, data:, file:) stays text. */
const SAFE_LINK = /^https?:\/\//i;

/** CommonMark without raw HTML: the answer's Markdown is parsed to tokens, never rendered to markup. */
const markdown = new MarkdownIt({ html: false, linkify: false, typographer: false });
markdown.validateLink = (url) => SAFE_LINK.test(url.trim());

const blockTags: Record<string, keyof HTMLElementTagNameMap> = {
  paragraph_open: 'p',
  bullet_list_open: 'ul',
  ordered_list_open: 'ol',
  list_item_open: 'li',
  blockquote_open: 'blockquote',
  table_open: 'table',
  thead_open: 'thead',
  tbody_open: 'tbody',
  tr_open: 'tr',
  th_open: 'th',
  td_open: 'td',
};

/**
 * The answer as DOM built from markdown-it's tokens: headings, lists,
 * emphasis, code and tables become elements; every piece of text is a Text
 * node, its numbers linked as the server grounded them (not in code or
 * link text); http(s) links open in a new tab without the page's opener or
 * referrer, any other link stays text.
 */
export function answerView(answer: string, grounding: AnswerGrounding | null): HTMLElement {
  const segmentFor = segmentFinder(grounding);
  let linkDepth = 0;
  const root = h('div', { class: 'answer-text' });
  const stack: HTMLElement[] = [root];
  const top = (): HTMLElement => stack[stack.length - 1] ?? root;

  const inline = (tokens: readonly Token[], parent: HTMLElement): void => {
    const inlineStack: HTMLElement[] = [parent];
    const current = (): HTMLElement => inlineStack[inlineStack.length - 1] ?? parent;
    for (const token of tokens) {
      switch (token.type) {
        case 'text': {
          const segment = linkDepth === 0 ? segmentFor(token.content) : null;
          current().append(...groundedText(token.content, segment));
          break;
        }
        case 'code_inline':
          current().append(h('code', {}, token.content));
          break;
        case 'softbreak':
          current().append(document.createTextNode(' '));
          break;
        case 'hardbreak':
          current().append(h('br'));
          break;
        case 'strong_open':
        case 'em_open':
        case 's_open': {
          const element = h(token.type === 'strong_open' ? 'strong' : token.type === 'em_open' ? 'em' : 's');
          current().append(element);
          inlineStack.push(element);
          break;
        }
        case 'strong_close':
        case 'em_close':
        case 's_close':
          if (inlineStack.length > 1) inlineStack.pop();
          break;
        case 'link_open': {
          const href = token.attrGet('href') ?? '';
          // validateLink let only http(s) through; checked again here, the one place a link is made.
          const element = SAFE_LINK.test(href.trim())
            ? h('a', { href: href.trim(), target: '_blank', rel: 'noopener noreferrer', class: 'external' })
            : h('span', { class: 'link-text' });
          current().append(element);
          inlineStack.push(element);
          linkDepth += 1;
          break;
        }
        case 'link_close':
          if (inlineStack.length > 1) inlineStack.pop();
          linkDepth = Math.max(0, linkDepth - 1);
          break;
        case 'image':
          current().append(document.createTextNode(`[image: ${token.content}]`));
          break;
        default:
          if (token.content !== '') current().append(document.createTextNode(token.content));
      }
    }
  };

  for (const token of markdown.parse(answer, {})) {
    if (token.hidden) continue; // the paragraphs of a tight list
    if (token.type === 'inline') {
      inline(token.children ?? [], top());
    } else if (token.type === 'heading_open') {
      // The answer sits under the step's own heading: its sections are one level further down.
      const level = Math.min(6, Number(token.tag.slice(1)) + 4) as 5 | 6;
      const element = h(`h${level}`);
      top().append(element);
      stack.push(element);
    } else if (token.type in blockTags) {
      const tag = blockTags[token.type] ?? 'div';
      const element = h(tag);
      if (tag === 'table') {
        const wrapper = h(
          'div',
          { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': 'Table in the answer' },
          element,
        );
        top().append(wrapper);
      } else {
        top().append(element);
      }
      stack.push(element);
    } else if (token.nesting === -1) {
      if (stack.length > 1) stack.pop();
    } else if (token.type === 'fence' || token.type === 'code_block') {
      top().append(h('pre', { tabindex: '0' }, h('code', {}, token.content)));
    } else if (token.type === 'hr') {
      top().append(h('hr'));
    }
  }
  return root;
}
