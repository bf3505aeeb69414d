import { createHash } from 'node:crypto';

/** What is done to a chart's SVG markup after vega draws it; apart from the renderer so the main process can use it without loading vega. */

/**
 * Defence in depth for markup made from untrusted specs: vega escapes text,
 * but hrefs (the `href` channel) and url() paint references could point
 * outside the report. Only in-document references and data: images survive.
 *
 * Structure, not text: only tags (their attributes and url() values) and
 * script and style elements are rewritten. The text of titles and labels is
 * the user's and round-trips exactly, even when it reads `url(...)` or
 * `href="..."` (vega escapes `<` and `&` in it, so it cannot open a tag).
 * One pass over the markup: charts of 5 000 points make SVGs of a megabyte.
 */
export function sanitizeChartSvg(svg: string): string {
  return svg.replace(
    SVG_MARKUP,
    (markup: string, closed: string | undefined, unclosed: string | undefined) => {
      if (unclosed !== undefined) return '';
      if (closed !== undefined) {
        // A script goes whole; a style element keeps its rules without outside url()s.
        return closed.toLowerCase() === 'script' ? '' : markup.replace(URL_REFERENCE, keepLocalUrl);
      }
      // Most tags (a 5 000-point chart's paths) have nothing the attribute pass would change: skipped whole.
      return MAY_NEED_REWRITE.test(markup) ? markup.replace(ATTRIBUTE, keepSafeAttribute) : markup;
    },
  );
}

/**
 * A script or style element with its content (or, unclosed, all that follows),
 * or one tag, whose quoted values may hold `>`. Text between tags is not matched.
 */
const SVG_MARKUP =
  /<(script|style)\b(?:[^>"']|"[^"]*"|'[^']*')*>[\s\S]*?<\/\1\s*>|<(script|style)\b[\s\S]*$|<[A-Za-z/](?:[^>"']|"[^"]*"|'[^']*')*>?/gi;
/** Every attribute of a tag, in turn (so that no match starts inside a value). */
const ATTRIBUTE = /\s+([^\s=>/"']+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s"'>]+))?/g;
const URL_REFERENCE = /url\(([^)]*)\)/gi;
/**
 * What any change `keepSafeAttribute` makes needs in the tag: an attribute
 * name starting `on` (after whitespace, as ATTRIBUTE reads names), an href,
 * or a url() in a value. A tag without all three is kept as it is.
 */
const MAY_NEED_REWRITE = /\son|href|url\(/i;

function keepSafeAttribute(match: string, name: string, value: string | undefined): string {
  if (/^on/i.test(name)) return '';
  if (/^(?:xlink:)?href$/i.test(name)) {
    const target = (value ?? '').replace(/^["']|["']$/g, '').trim();
    return /^(?:#|data:image\/(?:png|jpeg|gif|webp);)/i.test(target) ? match : '';
  }
  // aria-* and role hold text for assistive technology (vega puts titles there): never a reference.
  if (value === undefined || /^(?:aria-|role$)/i.test(name)) return match;
  return match.slice(0, match.length - value.length) + value.replace(URL_REFERENCE, keepLocalUrl);
}

function keepLocalUrl(match: string, target: string): string {
  return /^\s*['"]?#/.test(target) ? match : 'none';
}

/**
 * Prefixes vega's ids (`gradient_0`, `p_gradient_0`, `clip1`) and their
 * `url(#…)` references with a hash of the chart: every chart's first
 * gradient is `gradient_0`, and in one HTML page the second chart's legend
 * would paint with the first one's gradient.
 */
export function scopeSvgIds(svg: string): string {
  if (!/\sid="(?:p_)?(?:gradient_|clip)\d+"/.test(svg)) return svg;
  const prefix = `c${createHash('sha256').update(svg).digest('hex').slice(0, 10)}-`;
  // Inside tags only, like the sanitizer: a title reading `url(#clip1)` is the user's text.
  return svg.replace(SVG_MARKUP, (markup: string) =>
    markup.replace(
      /(\sid="|url\(#)((?:p_)?gradient_\d+|clip\d+)(?=[")])/g,
      (_match, before: string, id: string) => `${before}${prefix}${id}`,
    ),
  );
}
