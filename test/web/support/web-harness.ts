import { AxeBuilder } from '@axe-core/playwright';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';

/** Debian's Chromium, as the brief and the report's browser tests launch it. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

export interface PageWatch {
  page: Page;
  consoleErrors: string[];
  pageErrors: string[];
  /** Every request the page made, with its URL. */
  requests: string[];
  dialogs: string[];
  /** Main-frame navigations after the first load. */
  navigations: string[];
}

/** A page on the UI with everything it does recorded: dialogs (dismissed), requests, errors, navigations. */
export async function openUi(
  browser: Browser,
  url: string,
  viewport = { width: 1280, height: 900 },
  colorScheme: 'light' | 'dark' = 'light',
): Promise<PageWatch> {
  const context = await browser.newContext({ viewport, colorScheme, acceptDownloads: true });
  const page = await context.newPage();
  const watch: PageWatch = {
    page,
    consoleErrors: [],
    pageErrors: [],
    requests: [],
    dialogs: [],
    navigations: [],
  };
  page.on('console', (message) => {
    if (message.type() === 'error') watch.consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => watch.pageErrors.push(error.message));
  page.on('request', (request) => watch.requests.push(request.url()));
  page.on('dialog', (dialog) => {
    watch.dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  await page.goto(url, { waitUntil: 'load' });
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame()) watch.navigations.push(frame.url());
  });
  return watch;
}

/** No dialog, no page error, no request anywhere but the server, no navigation away. */
export function expectInert(watch: PageWatch, serverUrl: string): void {
  expect(watch.dialogs).toEqual([]);
  expect(watch.pageErrors).toEqual([]);
  expect(
    watch.requests.filter(
      (url) =>
        !url.startsWith(`${serverUrl}/`) && !url.startsWith('data:') && !url.startsWith(`blob:${serverUrl}/`),
    ),
  ).toEqual([]);
  expect(watch.navigations.filter((url) => !url.startsWith(`${serverUrl}/`))).toEqual([]);
}

/** axe-core's serious and critical violations of the page as it is now. */
export async function seriousViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).analyze();
  return results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`,
    );
}
