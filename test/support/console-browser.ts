import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';

/** Debian's Chromium; the tests never download a browser. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Where each run keeps its screenshot of every console page. */
export const SCREENSHOT_DIR = join(tmpdir(), 'agentrelay-console-screenshots');

export interface ConsoleBrowser {
  context: BrowserContext;
  page: Page;
  /** What the page reported as errors (CSP refusals among them). */
  consoleErrors: string[];
  close(): Promise<void>;
}

/** Chromium with a fresh profile, one page, and the page's console errors collected. */
export async function openConsoleBrowser(): Promise<ConsoleBrowser> {
  const profile = await mkdtemp(join(tmpdir(), 'console-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    args: CHROMIUM_ARGS,
    headless: true,
    viewport: { width: 1280, height: 900 },
    locale: 'en-GB',
    timezoneId: 'UTC',
  });
  // Generous: the machine running the tests may be busy.
  context.setDefaultTimeout(20_000);
  const page = context.pages()[0] ?? (await context.newPage());
  const consoleErrors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => consoleErrors.push(error.message));
  return {
    context,
    page,
    consoleErrors,
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

let axeSource: Promise<string> | undefined;

/**
 * Runs axe-core in the page and returns its serious and critical violations. The script goes in
 * through the DevTools protocol (page.evaluate), which the page's CSP does not govern, so the
 * console keeps its `script-src 'self'` while it is checked.
 */
export async function seriousAccessibilityViolations(page: Page): Promise<AxeViolation[]> {
  axeSource ??= readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  const source = await axeSource;
  await page.evaluate(source);
  const violations = await page.evaluate<AxeViolation[]>(`
    axe.run(document, { resultTypes: ['violations'] }).then((result) =>
      result.violations.map((violation) => ({
        id: violation.id,
        impact: violation.impact ?? null,
        help: violation.help,
        nodes: violation.nodes.map((node) => JSON.stringify(node.target)),
      })),
    )`);
  return violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
}

/** Waits for what a person would wait for: the element to be shown. */
export async function shown(locator: Locator, timeout?: number): Promise<Locator> {
  await locator.waitFor({ state: 'visible', timeout });
  return locator;
}

/** `prefix` and six random letters: a word full-text search reads as one, unique to this run. */
export function searchableWord(prefix: string): string {
  return `${prefix}${Array.from({ length: 6 }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26))).join('')}`;
}

/**
 * A fresh browser (no session at the relay or at the provider) signed in to the console at
 * `consoleUrl` through the OpenID provider's own login form and consent, as `login`; done when the
 * console shows the person as `name`.
 */
export async function signInToConsole(consoleUrl: string, issuer: string, login: string, name: string): Promise<ConsoleBrowser> {
  const browser = await openConsoleBrowser();
  try {
    const { page } = browser;
    await page.goto(consoleUrl);
    await (await shown(page.getByRole('link', { name: 'Sign in with your organisation' }))).click();
    await page.waitForURL((url) => url.origin === issuer);
    await page.locator('input[name="login"]').fill(login);
    await page.locator('input[name="password"]').fill('any password');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await (await shown(page.getByRole('button', { name: 'Continue' }))).click();
    await shown(page.getByRole('heading', { level: 1, name: 'Live handoffs' }));
    await shown(page.getByTestId('signed-in-as').getByText(name));
    return browser;
  } catch (error) {
    await browser.close();
    throw error;
  }
}

/** The headers an admin API call needs to act as the browser's console session: its cookie and its CSRF token. */
export async function consoleSessionHeaders(browser: ConsoleBrowser, relayUrl: string): Promise<{ cookie: string; 'x-csrf-token': string }> {
  const cookie = (await browser.context.cookies(`${relayUrl}/admin/`)).find((entry) => entry.name === 'relay_session');
  if (!cookie) throw new Error('the browser holds no relay_session cookie');
  const header = `${cookie.name}=${cookie.value}`;
  const session = (await (await fetch(`${relayUrl}/admin/session`, { headers: { cookie: header } })).json()) as { csrf_token: string };
  return { cookie: header, 'x-csrf-token': session.csrf_token };
}
