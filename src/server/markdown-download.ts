import { readEmbeddableImages } from '../report/index.ts';
import { resolveInside } from './safe-name.ts';

/**
 * A report.md as one file to download: its figures and charts are in
 * `assets/` beside it (`![…](assets/E7-figure-1.png)`) and the images the
 * analysis saved in `artifacts/`, which a download of the single file leaves
 * behind, so each such image is put inline as a data: URI, read from
 * `folders` (a turn's report folder has its own `assets/`, the artifacts are
 * the run folder's) under the report's own limits (an image type by its
 * bytes, 5 MB each, 30 MB in all); one past them keeps its link. Only the report's own image links outside
 * code blocks are rewritten: the model's images were turned into text when
 * the report was written, and a cell's code or output that reads like such a
 * link is left as printed. Links to other files (a table's CSV) stay relative.
 */
export async function selfContainedMarkdown(
  folders: Readonly<Record<Folder, string>>,
  markdown: string,
): Promise<string> {
  const lines = markdown.split('\n');
  const prose = outsideCodeBlocks(lines);
  // Per folder: each link's target, percent-decoded, kept only when it stays inside that folder.
  const wanted: Record<Folder, Map<string, string>> = { assets: new Map(), artifacts: new Map() };
  lines.forEach((line, index) => {
    if (!prose[index]) return;
    for (const [, , folder, target = ''] of line.matchAll(IMAGE_LINK)) {
      const decoded = safeDecode(target);
      if (decoded !== null && resolveInside(folders[folder as Folder], decoded) !== null)
        wanted[folder as Folder].set(target, decoded);
    }
  });
  const read = {
    assets: await readEmbeddableImages([...wanted.assets.values()], folders.assets),
    artifacts: await readEmbeddableImages([...wanted.artifacts.values()], folders.artifacts),
  };
  return lines
    .map((line, index) =>
      prose[index]
        ? line.replace(IMAGE_LINK, (whole, caption: string, folder: Folder, target: string) => {
            const image = read[folder].get(wanted[folder].get(target) ?? '');
            return image === undefined
              ? whole
              : `![${caption}](data:${image.mimeType};base64,${image.base64})`;
          })
        : line,
    )
    .join('\n');
}

/**
 * An image the markdown report links into its assets or artifacts folder:
 * assets by plain file name, artifacts by their percent-encoded relative path.
 */
const IMAGE_LINK =
  /!\[([^\]\n]*)\]\((assets|artifacts)\/([A-Za-z0-9%._~/-]+\.(?:png|jpe?g|gif|webp|PNG|JPE?G|GIF|WEBP))\)/g;
type Folder = 'assets' | 'artifacts';

/** For each line, whether it is outside fenced code (``` or ~~~ fences, as CommonMark opens and closes them). */
function outsideCodeBlocks(lines: readonly string[]): boolean[] {
  let fence: string | null = null;
  return lines.map((line) => {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === null) {
      if (marker !== undefined) {
        fence = marker;
        return false;
      }
      return true;
    }
    if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) fence = null;
    return false;
  });
}

function safeDecode(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}
