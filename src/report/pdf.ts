import { access, constants } from 'node:fs/promises';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ChromiumUnavailableError, DatalystError } from '../errors/index.ts';

/** Where Debian installs Chromium; `DATALYST_CHROMIUM` (read by the CLI) names another. */
export const DEFAULT_CHROMIUM_PATH = '/usr/bin/chromium';

// Headless, no GPU, and no update checks or other traffic of Chromium's own.
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];

export interface PdfPrinterOptions {
  /** The Chromium (or Chrome) binary. Default `/usr/bin/chromium`. */
  executablePath?: string;
  /** A print that takes longer is stopped (its page closed) and rejects with `PDF_TIMEOUT`. Default 120 s. */
  printTimeoutMs?: number;
}

const DEFAULT_PRINT_TIMEOUT_MS = 120_000;

export interface PdfPageSize {
  widthPx: number;
  heightPx: number;
}

/**
 * Prints HTML to PDF with headless Chromium (playwright-core drives Debian's
 * Chromium; no browser is downloaded). The pages it prints are Datalyst's own
 * (a report, a chart's SVG): scripts are disabled and every request but
 * `data:` is refused, so printing is as offline as opening the report.
 * One browser serves many prints; `close()` ends it.
 */
export class PdfPrinter {
  private constructor(
    private readonly browser: Browser,
    private readonly context: BrowserContext,
    private readonly printTimeoutMs: number,
  ) {}

  /** Starts Chromium; a ChromiumUnavailableError (with the fix) when it is missing or does not start. */
  static async launch(options: PdfPrinterOptions = {}): Promise<PdfPrinter> {
    const executablePath = options.executablePath ?? DEFAULT_CHROMIUM_PATH;
    await assertChromiumInstalled(executablePath);
    const { chromium } = await import('playwright-core');
    let browser: Browser;
    try {
      browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
    } catch (error) {
      throw new ChromiumUnavailableError(`Chromium (${executablePath}) did not start.`, error);
    }
    const context = await browser.newContext({ javaScriptEnabled: false, offline: true });
    await context.route(/^(?!data:)/, (route) => route.abort());
    return new PdfPrinter(browser, context, options.printTimeoutMs ?? DEFAULT_PRINT_TIMEOUT_MS);
  }

  /**
   * Prints one HTML document. Without `pageSize`, A4 pages with margins (the
   * report's print CSS decides the breaks); with it, one page of that size
   * and no margin (a chart).
   */
  async print(html: string, pageSize?: PdfPageSize): Promise<Uint8Array> {
    const page = await this.context.newPage();
    let timer: NodeJS.Timeout | undefined;
    // A print that hangs must not hold its caller (a server prints one at a time) for ever: its page is closed.
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new DatalystError(
              'PDF_TIMEOUT',
              `The PDF was not printed within ${this.printTimeoutMs / 1000} s.`,
              {
                fault: 'system',
                fix: 'Use the HTML report (the PDF is the HTML printed), or try again when the machine is less busy.',
              },
            ),
          ),
        this.printTimeoutMs,
      );
    });
    const printing = printOn(page, html, pageSize);
    printing.catch(() => undefined); // after a timeout, the closed page rejects it: already answered
    try {
      return await Promise.race([printing, timedOut]);
    } finally {
      clearTimeout(timer);
      await page.close();
    }
  }

  async close(): Promise<void> {
    await this.browser.close();
  }
}

/** Prints `html` on `page`: A4 with margins, or one page of `pageSize`. */
async function printOn(page: Page, html: string, pageSize: PdfPageSize | undefined): Promise<Uint8Array> {
  await page.setContent(html, { waitUntil: 'load' });
  await page.emulateMedia({ media: 'print' });
  const pdf = pageSize
    ? await page.pdf({
        width: `${Math.max(1, Math.ceil(pageSize.widthPx))}px`,
        height: `${Math.max(1, Math.ceil(pageSize.heightPx))}px`,
        printBackground: true,
        pageRanges: '1',
      })
    : await page.pdf({
        format: 'A4',
        printBackground: true,
        margin: { top: '14mm', bottom: '14mm', left: '12mm', right: '12mm' },
      });
  return new Uint8Array(pdf);
}

/**
 * Runs `render` while Chromium starts, for a report with a PDF: the browser
 * starts as the charts are drawn instead of after them. `render` gets the
 * printer to await when it prints (null when `wanted` is false, and nothing is
 * started); a Chromium that is missing or does not start rejects there, so the
 * other formats are written first. The browser is closed when `render` ends.
 */
export async function withPdfPrinterStarting<T>(
  wanted: boolean,
  chromiumPath: string | undefined,
  render: (printer: Promise<PdfPrinter> | null) => Promise<T>,
): Promise<T> {
  if (!wanted) return render(null);
  const printer = PdfPrinter.launch(chromiumPath === undefined ? {} : { executablePath: chromiumPath });
  // Awaited later (after the other formats): not an unhandled rejection meanwhile.
  printer.catch(() => undefined);
  try {
    return await render(printer);
  } finally {
    await printer.then(
      (started) => started.close(),
      () => undefined,
    );
  }
}

/** Fails with the fix when there is no Chromium to run at `executablePath` (default /usr/bin/chromium). */
export async function assertChromiumInstalled(executablePath = DEFAULT_CHROMIUM_PATH): Promise<void> {
  await access(executablePath, constants.X_OK).catch((error: unknown) => {
    throw new ChromiumUnavailableError(
      `There is no Chromium at ${executablePath} to print the PDF with.`,
      error,
    );
  });
}

/** A page that holds one chart's SVG and nothing else, for a one-page PDF of the chart's size. */
export function chartPageHtml(svg: string): string {
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><style>@page{margin:0}html,body{margin:0;padding:0;background:white}svg{display:block}</style></head><body>${svg}</body></html>`;
}
