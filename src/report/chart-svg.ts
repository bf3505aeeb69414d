import { createHash } from 'node:crypto';

/** What is done to a chart's SVG markup after vega draws it; apart from the renderer so the main process can use it without loading vega. */

/**
 * Defence in depth for markup made from untrusted specs: vega escapes text,
 * but hrefs (the `href` channel) and url() paint references could point
 * outside the report. Only in-document references and data: images survive.
 * One pass over the markup: charts of 5 000 points make SVGs of a megabyte.
 */
export function sanitizeChartSvg(svg: string): string {
  return svg.replace(
    /\s((?:xlink:)?href|on[a-z]+)="([^"]*)"|url\(([^)]*)\)|<script\b[\s\S]*?<\/script>/gi,
    (match, attribute: string | undefined, value: string | undefined, target: string | undefined) => {
      if (attribute !== undefined) {
        const isLink = /href$/i.test(attribute);
        return isLink && /^(?:#|data:image\/(?:png|jpeg|gif|webp);)/i.test((value ?? '').trim()) ? match : '';
      }
      if (target !== undefined) return /^\s*['"]?#/.test(target) ? match : 'none';
      return '';
    },
  );
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
  return svg.replace(
    /(\sid="|url\(#)((?:p_)?gradient_\d+|clip\d+)(?=[")])/g,
    (_match, before: string, id: string) => `${before}${prefix}${id}`,
  );
}
