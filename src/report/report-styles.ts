import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** highlight.js's GitHub theme, inlined so that the report needs no network. */
const highlightCss = readFileSync(require.resolve('highlight.js/styles/github.css'), 'utf8').replace(
  /\/\*[\s\S]*?\*\//g,
  '',
);

const reportCss = `
:root { --text: #1f2328; --muted: #59636e; --line: #d1d9e0; --soft: #f6f8fa; --accent: #0969da; --ok: #1a7f37; --warn: #9a6700; --bad: #cf222e; }
* { box-sizing: border-box; }
html { font-size: 16px; }
body { margin: 0; color: var(--text); background: #fff; font: 1rem/1.55 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", Roboto, sans-serif; }
main { max-width: 76rem; margin: 0 auto; padding: 1rem 1.5rem 4rem; }
h1 { font-size: 1.7rem; line-height: 1.25; margin: 0 0 .35rem; }
h2 { font-size: 1.3rem; margin: 2.2rem 0 .8rem; padding-bottom: .3rem; border-bottom: 1px solid var(--line); }
/* A heading that is one long file name ("longest_absense_from_school.csv") breaks rather than pushing a phone's page sideways. */
h1, h2, h3, h4 { overflow-wrap: break-word; }
h3 { font-size: 1.05rem; margin: 1.4rem 0 .5rem; }
.turn-heading { font-size: 1.15rem; margin: 2.4rem 0 .6rem; padding: .4rem .6rem; background: var(--soft); border-left: 4px solid var(--accent); }
.turn { margin: 1rem 0 1.6rem; }
a { color: var(--accent); }
code, pre, .mono { font-family: ui-monospace, "DejaVu Sans Mono", SFMono-Regular, Menlo, Consolas, monospace; font-size: .85rem; }
pre { margin: .4rem 0; padding: .7rem .9rem; background: var(--soft); border: 1px solid var(--line); border-radius: 6px; overflow: auto; white-space: pre; }
.subtitle { color: var(--muted); margin: 0 0 1rem; font-size: .93rem; }
.banner { border-radius: 6px; padding: .7rem 1rem; margin: .8rem 0; border: 1px solid; font-weight: 500; }
.banner-offline { background: #ddf4ff; border-color: #54aeff; }
.banner-outcome { background: #fff1e5; border-color: #fb8f44; font-size: 1.05rem; }
.banner-cancelled, .banner-incomplete { background: #ffebe9; border-color: #ff8182; }
.label { margin: 1rem 0 .3rem; font-size: .78rem; font-weight: 700; letter-spacing: .05em; text-transform: uppercase; color: var(--muted); }
.instruction { margin: 0; padding: .6rem 1rem; border-left: 4px solid var(--accent); background: var(--soft); white-space: pre-wrap; }
.ask { margin: 0; padding: .1rem 1rem; border-left: 4px solid var(--accent); background: var(--soft); }
html { scroll-padding-top: 3rem; }
nav.toc { position: sticky; top: 0; z-index: 10; background: rgba(255,255,255,.96); border-bottom: 1px solid var(--line); font-size: .9rem; }
/* The links wrap to a second line on a narrow screen: scrolled sideways, the last ones (Provenance) were cut off at 390 px with nothing to say there were more. */
nav.toc .toc-inner { max-width: 76rem; margin: 0 auto; padding: .45rem 1.5rem; display: flex; flex-wrap: wrap; gap: .25rem 1rem; align-items: center; }
nav.toc a, nav.toc .toc-verdict { text-decoration: none; white-space: nowrap; }
nav.toc .toc-top { font-weight: 700; color: var(--text); }
.toc-verdict { font-weight: 700; color: #fff; background: var(--bad); border-radius: 1rem; padding: 0 .6rem; }
.look-cancelled .toc-verdict, .look-incomplete .toc-verdict { background: #bc4c00; }
.look-asked .toc-verdict { background: var(--accent); }
.look-no-data .toc-verdict { background: #6e7781; }
header.band { margin: 0 -1.5rem 1rem; padding: 1rem 1.5rem .6rem; border-top: 6px solid var(--ok); }
header.band-failed { border-top-color: var(--bad); background: #fff5f5; }
header.band-cancelled, header.band-incomplete { border-top-color: #bc4c00; background: #fff8f0; }
header.band-no-data { border-top-color: #6e7781; background: #f6f8fa; }
header.band-asked { border-top-color: var(--accent); background: #f3f9ff; }
.verdict { margin: 0 0 .2rem; font-size: .78rem; font-weight: 700; letter-spacing: .06em; text-transform: uppercase; color: var(--ok); }
.verdict-failed { color: var(--bad); }
.verdict-cancelled, .verdict-incomplete { color: #bc4c00; }
.verdict-no-data { color: #57606a; }
.verdict-asked { color: var(--accent); }
.title-verdict { color: var(--bad); }
.look-cancelled .title-verdict, .look-incomplete .title-verdict { color: #bc4c00; }
.look-no-data .title-verdict { color: #57606a; }
.look-asked .title-verdict { color: var(--accent); }
.banner p { margin: .2rem 0; }
.banner-failed { background: #ffebe9; border-color: #ff8182; }
.banner-no-data { background: #eaeef2; border-color: #8c959f; }
.banner-asked { background: #ddf4ff; border-color: #54aeff; }
.instruction-full summary { cursor: pointer; color: var(--accent); font-size: .9rem; }
.no-answer { font-size: 1.05rem; padding: .8rem 1rem; border: 1px dashed var(--line); border-radius: 6px; background: var(--soft); }
.lead { display: block; }
@media (min-width: 64rem) {
  .lead-with-visuals { display: grid; grid-template-columns: minmax(0, 1.35fr) minmax(0, 1fr); gap: 1.5rem; align-items: start; }
  .lead-with-visuals .key-visuals { position: sticky; top: 3rem; }
}
.key-visuals h2 { margin-top: 2.2rem; }
.key-visuals figure { margin-bottom: .8rem; }
.lead #answer h2 { margin-top: 1rem; }
.key-visuals h2 { margin-top: 1rem; }
figure { position: relative; }
a.zoom { position: absolute; inset: 0 0 2rem 0; z-index: 1; }
/* A figure that opens large keeps a strip above it for the label, which then covers none of it (a chart's title). */
figure:has(> a.zoom) { padding-top: 1.7rem; }
a.zoom span { position: absolute; right: .4rem; top: .3rem; font-size: .75rem; background: rgba(255,255,255,.9); border: 1px solid var(--line); border-radius: 4px; padding: 0 .35rem; color: var(--accent); }
figure figcaption { position: relative; z-index: 2; }
.lightbox { display: none; }
.lightbox:target { display: flex; position: fixed; inset: 0; z-index: 100; background: #fff; align-items: center; justify-content: center; padding: 2.5rem 1rem 1rem; container-type: size; }
/* Opened, a drawing fills the overlay's width or its height, whichever it meets first, at its own aspect ratio (--ratio, width / height, set on it): its own size (a 420 px chart) stayed small on any screen. */
.lightbox svg { width: min(100cqw, 100cqh * var(--ratio)); height: auto; aspect-ratio: var(--ratio); }
.lightbox-close { position: absolute; top: .4rem; right: .8rem; font-size: 2rem; line-height: 1; text-decoration: none; color: var(--text); }
details > summary { cursor: pointer; }
details.round { margin: .35rem 0; border: 1px solid var(--line); border-radius: 6px; background: #fff; }
details.round > summary { padding: .4rem .7rem; list-style-position: inside; display: block; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
details.round[open] > summary { border-bottom: 1px solid var(--line); background: var(--soft); white-space: normal; }
details.round > article { margin: .6rem .7rem; }
details.round-failed { border-color: #ff8182; }
.round-number { font-weight: 700; margin-right: .6rem; }
.round-failed .round-number { color: var(--bad); }
summary .status { margin-right: .6rem; }
.gist { color: var(--muted); font-size: .9rem; }
.process-hint { color: var(--muted); font-size: .9rem; }
details.code > summary, details.value-text > summary { font-size: .85rem; color: var(--accent); margin: .2rem 0; }
.data-intro { color: var(--muted); font-size: .9rem; }
.data-toc { display: flex; flex-wrap: wrap; gap: .3rem 1rem; font-size: .9rem; margin: .4rem 0 .8rem; }
.data-table { margin: 1.2rem 0 2rem; }
.data-table h3 { margin-bottom: .2rem; }
.shape { margin: 0 0 .4rem; color: var(--muted); }
ul.alerts { list-style: none; padding: 0; margin: .4rem 0 .6rem; display: flex; flex-wrap: wrap; gap: .3rem .5rem; }
li.alert { font-size: .85rem; border: 1px solid #d4a72c; background: #fff8c5; border-radius: 6px; padding: .15rem .5rem; }
li.alert-correlation, li.alert-duplicates { border-color: #54aeff; background: #ddf4ff; }
li.alert-constant, li.alert-empty { border-color: #8c959f; background: #eaeef2; }
.alert-kind { font-weight: 700; font-size: .75rem; text-transform: uppercase; letter-spacing: .03em; margin-right: .2rem; }
.alerts-none { color: var(--muted); font-size: .85rem; }
.table-wrap.columns-wrap { max-height: none; }
table.columns { border-collapse: collapse; font-size: .85rem; width: 100%; }
table.columns th, table.columns td { padding: .25rem .55rem; border-bottom: 1px solid var(--line); text-align: left; vertical-align: middle; }
table.columns thead th { background: var(--soft); }
table.columns tbody th { max-width: 16rem; overflow-wrap: break-word; font-weight: 600; }
table.columns td.warn { color: var(--warn); font-weight: 600; }
table.first-rows { border-collapse: collapse; font-size: .8rem; }
details.first-rows > summary { cursor: pointer; font-size: .85rem; color: var(--muted); margin: .4rem 0 0; }
table.first-rows th, table.first-rows td { padding: .2rem .55rem; border-bottom: 1px solid var(--line); text-align: left; white-space: nowrap; max-width: 16rem; overflow: hidden; text-overflow: ellipsis; }
table.first-rows thead th { background: var(--soft); }
.type { display: inline-block; font-size: .75rem; padding: 0 .4rem; border-radius: 1rem; background: var(--soft); border: 1px solid var(--line); }
.dtype { color: var(--muted); font-size: .75rem; }
td.values { max-width: 22rem; }
.stat, .top { display: inline-block; margin-right: .7rem; white-space: nowrap; max-width: 14rem; overflow: hidden; text-overflow: ellipsis; vertical-align: bottom; }
.stat-name { color: var(--muted); font-size: .75rem; }
svg.spark { display: block; fill: #4c78a8; }
svg.spark-top { fill: #f58518; }
.grounding { font-size: .93rem; padding: .5rem .8rem; border-radius: 6px; background: var(--soft); border: 1px solid var(--line); }
.answer { overflow-wrap: anywhere; }
.answer table, .markdown table { border-collapse: collapse; }
.answer td, .answer th, .markdown td, .markdown th { border: 1px solid var(--line); padding: .2rem .5rem; }
.num { border-radius: 3px; padding: 0 .1rem; }
.num sup { vertical-align: baseline; font-size: .66em; line-height: 1; margin-left: .25em; padding: 0 .2em; border: 1px solid currentColor; border-radius: 3px; }
.num-verified { color: inherit; text-decoration: none; border-bottom: 1px dotted var(--ok); }
.num-verified sup { color: var(--ok); }
.num-unverified { background: #fff8c5; border-bottom: 1px dashed var(--warn); }
.num-unverified sup { color: var(--warn); font-weight: 700; }
.rerun-mark { font-size: .78em; font-weight: 700; border-radius: 3px; padding: 0 .25rem; margin-left: .15em; white-space: nowrap; }
.rerun-stale { background: #ffe2cc; color: #8a3b00; border: 1px solid #d9822b; }
.rerun-not-grounded { background: #eef0f3; color: #4a5260; border: 1px dashed #8a93a3; }
.rerun-sign-changed { background: #fff8c5; color: #7a5200; border: 1px solid #d4a72c; }
.image-omitted { color: var(--muted); font-style: italic; }
.gallery { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 28rem), 1fr)); gap: 1rem; align-items: start; }
.gallery figure.wide { grid-column: 1 / -1; }
/* In the page a figure is at most this tall (it opens large with a click); wide multi-panel ones span the row. */
.gallery figure svg, .key-visuals figure svg { max-height: 24rem; width: auto; }
figure { margin: 0; padding: .6rem; border: 1px solid var(--line); border-radius: 6px; background: #fff; break-inside: avoid; overflow-x: auto; }
figure svg, figure img { display: block; max-width: 100%; height: auto; margin: 0 auto; }
figcaption { font-size: .85rem; color: var(--muted); margin-top: .4rem; }
.chart-error { border: 1px solid var(--bad); background: #ffebe9; color: #82071e; border-radius: 6px; padding: .6rem .8rem; font-size: .9rem; }
.note { color: var(--warn); font-size: .85rem; margin: .3rem 0; }
.step { margin: 1rem 0; padding: .2rem 0 .2rem 1rem; border-left: 3px solid var(--line); }
.step > h3 { margin-top: .2rem; }
.step-analyze { border-left-color: #8250df; }
.step-understand { border-left-color: #bf8700; }
.step-code { border-left-color: var(--accent); }
.step-answer { border-left-color: var(--ok); }
.step-notice { border-left-color: #fb8f44; color: var(--muted); font-size: .93rem; }
.step-text { color: var(--muted); }
.kind { display: inline-block; font-size: .72rem; font-weight: 700; letter-spacing: .04em; text-transform: uppercase; padding: .05rem .45rem; border-radius: 1rem; background: var(--soft); border: 1px solid var(--line); margin-right: .4rem; vertical-align: middle; }
.output { margin-top: .5rem; }
.output-id { display: inline-block; font: 700 .8rem/1.4 ui-monospace, "DejaVu Sans Mono", monospace; color: #fff; background: var(--accent); border-radius: 4px; padding: 0 .4rem; margin-right: .4rem; }
.status { font-size: .85rem; color: var(--muted); }
.status-error, .status-timeout, .status-memory, .status-crashed, .status-output-limit, .status-cancelled { color: var(--bad); font-weight: 600; }
pre code.hljs { padding: 0; background: transparent; }
.answer h1, .answer h2, .answer h3, .answer h4, .answer h5, .answer h6 { font-size: 1.1rem; border: none; margin: 1.2rem 0 .4rem; padding: 0; }
.output figure { max-width: 40rem; }
.output figure.wide { max-width: none; }
pre.stdout { max-height: 28rem; }
pre.stderr { background: #fff8f0; max-height: 14rem; }
pre.error { background: #ffebe9; border-color: #ff8182; max-height: 20rem; }
.table-wrap { overflow: auto; max-height: 26rem; border: 1px solid var(--line); border-radius: 6px; margin: .4rem 0; }
table.data { border-collapse: collapse; font-size: .82rem; }
table.data th, table.data td { padding: .2rem .5rem; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
table.data th { background: var(--soft); position: sticky; top: 0; }
table.data tbody th { text-align: left; position: static; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1.2rem; margin: 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
table.files { border-collapse: collapse; font-size: .85rem; width: 100%; }
table.files th, table.files td { border-bottom: 1px solid var(--line); padding: .25rem .5rem; text-align: left; vertical-align: top; }
table.files td.hash { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: .75rem; overflow-wrap: anywhere; }
/* A long file name ("longest_absense_from_school.xlsx") may break too: at 390 px it pushed the page 29 px sideways and left the hash 5 characters wide. */
table.files td:first-child { overflow-wrap: anywhere; min-width: 6rem; }
footer { margin-top: 3rem; color: var(--muted); font-size: .85rem; }
@media (max-width: 40rem) {
  /* On a phone each column of the data section is a card: name, then type, distinct, missing, values and chart. */
  table.columns thead { display: none; }
  table.columns, table.columns tbody { display: block; }
  table.columns tr { display: grid; grid-template-columns: repeat(3, auto) 1fr; gap: .1rem .6rem; padding: .45rem .2rem; border-bottom: 1px solid var(--line); }
  table.columns th, table.columns td { display: block; border: none; padding: 0; }
  table.columns tbody th { grid-column: 1 / -1; overflow-wrap: anywhere; }
  table.columns td[data-label]::before { content: attr(data-label) " "; color: var(--muted); font-size: .75rem; }
  table.columns td.values, table.columns td.spark { grid-column: 1 / -1; max-width: none; }
}
@media (max-width: 40rem) { main { padding: 1rem; } header.band { margin: 0 -1rem 1rem; padding: .8rem 1rem .5rem; } nav.toc .toc-inner { padding: .45rem 1rem; } dl.facts { grid-template-columns: 1fr; } h1 { font-size: 1.35rem; } }
@media print {
  @page { margin: 1.6cm; }
  html { font-size: 11pt; }
  main { max-width: none; padding: 0; }
  nav.toc, a.zoom, .lightbox, .lightbox:target, .process-hint { display: none; }
  /* Paper cannot be unfolded: the process prints open (code included), each round starting whole where it fits. */
  details::details-content { content-visibility: visible; display: contents; }
  details > summary { list-style: none; }
  details.round > summary { white-space: normal; }
  .lead-with-visuals { display: block; }
  header.band { margin: 0 0 1rem; }
  pre, pre.stdout, pre.stderr, pre.error, .table-wrap { max-height: none; overflow: visible; white-space: pre-wrap; overflow-wrap: anywhere; }
  /* Not inside a word in a table's cells: 'anywhere' let the data section's headers print as "Distin ct", "Missin g". */
  .table-wrap th, .table-wrap td { overflow-wrap: break-word; }
  table.data th { position: static; }
  figure, .output, .banner, .grounding, .instruction, tr { break-inside: avoid; }
  h1, h2, h3, .label { break-after: avoid; }
  /* A figure never splits: one taller than a page is scaled down to fit it (A4 less the margins). */
  figure svg, figure img { max-height: 23cm; }
  .gallery { display: block; }
  .gallery figure { margin-bottom: .8rem; }
  thead { display: table-header-group; }
  a { color: inherit; text-decoration: none; }
  .num-verified { background: none; }
  .num-unverified { background: none; }
  .rerun-mark { background: none; }
}
`;

export const reportStyles = `${reportCss}\n${highlightCss}`;
