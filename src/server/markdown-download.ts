import { readFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * The run's report.md as one file to download: its figures and charts are
 * in `assets/` beside it (`![…](assets/E7-figure-1.png)`), which a download
 * of the single file leaves behind, so each such image is put inline as a
 * data: URI. Only the report's own image links are rewritten (the model's
 * text has its images turned into links when the report is written), and
 * only to files of that folder; an asset that cannot be read keeps its link.
 */
export async function selfContainedMarkdown(runDir: string, markdown: string): Promise<string> {
  const assetsDir = path.join(runDir, 'assets');
  const names = new Set([...markdown.matchAll(ASSET_IMAGE)].map((match) => match[2] as string));
  const inline = new Map<string, string>();
  for (const name of names) {
    const bytes = await readFile(path.join(assetsDir, name)).catch(() => null);
    if (bytes !== null) inline.set(name, `data:image/png;base64,${bytes.toString('base64')}`);
  }
  return markdown.replace(ASSET_IMAGE, (whole, caption: string, name: string) => {
    const uri = inline.get(name);
    return uri === undefined ? whole : `![${caption}](${uri})`;
  });
}

/** An image the markdown report links into its assets folder: a plain file name, no folder, no traversal. */
const ASSET_IMAGE = /!\[([^\]\n]*)\]\(assets\/([A-Za-z0-9][A-Za-z0-9._-]*\.png)\)/g;
