import hljs from 'highlight.js/lib/core';
import python from 'highlight.js/lib/languages/python';
import { h } from './dom.ts';

hljs.registerLanguage('python', python);

/**
 * Python code, highlighted. highlight.js escapes the code it is given; its
 * markup is parsed in an inert document and only `<span class="hljs-…">`
 * and text are copied over, so nothing of the model's code becomes markup
 * even if the highlighter had a bug.
 */
export function highlightedCode(code: string): HTMLElement {
  const element = h('code', { class: 'language-python hljs' });
  const markup = hljs.highlight(code, { language: 'python', ignoreIllegals: true }).value;
  const inert = new DOMParser().parseFromString(`<body>${markup}</body>`, 'text/html');
  copySafe(inert.body, element);
  return element;
}

function copySafe(from: Node, to: Node): void {
  for (const child of Array.from(from.childNodes)) {
    if (child.nodeType === Node.TEXT_NODE) {
      to.appendChild(document.createTextNode(child.textContent ?? ''));
    } else if (child instanceof Element && child.tagName === 'SPAN') {
      const span = document.createElement('span');
      const className = child.getAttribute('class') ?? '';
      if (/^[\w\s-]*$/.test(className)) span.className = className;
      copySafe(child, span);
      to.appendChild(span);
    } else {
      to.appendChild(document.createTextNode(child.textContent ?? ''));
    }
  }
}
