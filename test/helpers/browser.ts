/**
 * Headless Chromium for the report tests: Debian's own build, driven by playwright-core (which
 * never downloads a browser). Where it is not installed, the tests that need it skip and say why.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** false when Chromium is there; otherwise the reason the browser tests skip. */
export const browserSkip: string | false = existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed (run scripts/install-browser.sh as root)`;

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

export interface OpenedPage {
  readonly page: Page;
  /** Every URL the page asked for, its own included. */
  readonly requests: string[];
  /** Console errors and uncaught page errors. */
  readonly errors: string[];
}

/** Opens a URL in a fresh page, recording every request and every error from the start. */
export async function openPage(browser: Browser, url: string, colorScheme: 'light' | 'dark' = 'light'): Promise<OpenedPage> {
  const page = await browser.newPage({ viewport: { width: 1140, height: 900 }, colorScheme });
  const requests: string[] = [];
  const errors: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') errors.push(`${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  await page.goto(url, { waitUntil: 'load' });
  return { page, requests, errors };
}
