import { describe, expect, it } from 'vitest';
import { DatalystError } from '../../src/errors/index.ts';
import { withPdfPrinterStarting, type PdfPrinter } from '../../src/report/pdf.ts';

/**
 * The one place both reports (single and deep) start Chromium while their
 * charts are drawn: the browser starts before the work, a missing one fails
 * only where the PDF is awaited, and the browser is closed afterwards.
 */
describe('withPdfPrinterStarting', () => {
  it('starts nothing when no pdf is wanted', async () => {
    const seen = await withPdfPrinterStarting(false, '/nonexistent/chromium', (printer) =>
      Promise.resolve(printer),
    );
    expect(seen).toBeNull();
  });

  it('lets the other formats be written before a missing Chromium fails the pdf', async () => {
    const steps: string[] = [];
    const outcome = withPdfPrinterStarting(true, '/nonexistent/chromium', async (printer) => {
      // Chromium's failure is not thrown (nor unhandled) while the other formats are written.
      await new Promise((resolve) => setTimeout(resolve, 50));
      steps.push('other formats');
      await printer;
      steps.push('pdf');
    });
    const error: unknown = await outcome.catch((caught: unknown) => caught);
    expect(DatalystError.isInstance(error) && error.code).toBe('CHROMIUM_UNAVAILABLE');
    expect(steps).toEqual(['other formats']);
  });

  it('prints with the Chromium it started and closes it afterwards', async () => {
    let started: PdfPrinter | null = null;
    const pdf = await withPdfPrinterStarting(true, undefined, async (printer) => {
      started = await printer;
      return started?.print('<!DOCTYPE html><p>hello</p>');
    });
    expect(
      Buffer.from(pdf ?? [])
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-');
    // Closed: printing again fails.
    await expect((started as PdfPrinter | null)?.print('<p>again</p>')).rejects.toThrow();
  });
});

describe('PdfPrinter.print', () => {
  // A print that hangs held its caller for ever (the server prints one PDF at a time). Found by a review.
  it('stops a print that takes longer than its time limit, and prints the next one', async () => {
    const { PdfPrinter } = await import('../../src/report/pdf.ts');
    const slow = await PdfPrinter.launch({ printTimeoutMs: 1 });
    const error: unknown = await slow
      .print('<!DOCTYPE html><p>hello</p>')
      .then(() => null)
      .catch((caught: unknown) => caught);
    await slow.close();
    expect(DatalystError.isInstance(error) && error.code).toBe('PDF_TIMEOUT');
    const printer = await PdfPrinter.launch();
    try {
      const pdf = await printer.print('<!DOCTYPE html><p>hello</p>');
      expect(Buffer.from(pdf).subarray(0, 5).toString()).toBe('%PDF-');
    } finally {
      await printer.close();
    }
  });
});
