/**
 * Debian's Chromium driven by playwright-core, for the console's end-to-end tests. Every host name
 * but 127.0.0.1 fails to resolve (no internet), and each page records the URLs it requested, so a
 * test can show the console fetched nothing from anywhere but tollgate.
 */
import { chromium, type Browser, type Page } from "playwright-core";

export const CHROMIUM_PATH = "/usr/bin/chromium";

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: Bun.which("chromium") ?? CHROMIUM_PATH,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"],
  });
}

/**
 * One Chromium for a test file, launched again when it is gone: bun's test runner kills a timed-out
 * test's child processes, Chromium among them, and the tests after it must not fail for that.
 */
export class BrowserSession {
  private current: Promise<Browser> | undefined;

  /** The running browser, launched first if there is none or it was killed. */
  async browser(): Promise<Browser> {
    const running = this.current && await this.current.catch(() => undefined);
    if (running?.isConnected()) return running;
    this.current = launchBrowser();
    return await this.current;
  }

  async close(): Promise<void> {
    const running = this.current && await this.current.catch(() => undefined);
    if (running?.isConnected()) await running.close();
  }
}

export interface ConsolePage {
  page: Page;
  /** Every URL the page requested so far. */
  requests: string[];
  /** Console errors and uncaught exceptions (a CSP violation shows up here). */
  errors: string[];
  close(): Promise<void>;
}

/** A fresh context (its own sessionStorage) at `width` px, recording requests and errors. */
export async function openPage(source: Browser | BrowserSession, opts: { width?: number; colorScheme?: "light" | "dark" } = {}): Promise<ConsolePage> {
  const browser = source instanceof BrowserSession ? await source.browser() : source;
  const context = await browser.newContext({ viewport: { width: opts.width ?? 1280, height: 900 }, colorScheme: opts.colorScheme ?? "light" });
  const page = await context.newPage();
  const requests: string[] = [];
  const errors: string[] = [];
  page.on("request", (r) => requests.push(r.url()));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(String(e)));
  return { page, requests, errors, close: () => context.close() };
}

/** Submits the console's sign-in form at `url` with `rootKey`, without waiting for the outcome. */
export async function signIn(page: Page, url: string, rootKey: string): Promise<void> {
  await page.goto(`${url}/console`);
  await page.getByLabel("Root key").fill(rootKey);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** Signs in with `rootKey` and waits for the overview: the console took the key. */
export async function signedIn(page: Page, url: string, rootKey: string): Promise<void> {
  await signIn(page, url, rootKey);
  await page.getByRole("heading", { name: "Overview", exact: true }).waitFor();
}

/** A new tab signed in with `rootKey` at `path`, its main heading `heading` shown. */
export async function openSignedIn(browser: Browser | BrowserSession, url: string, rootKey: string, path: string, heading: string): Promise<ConsolePage> {
  const tab = await openPage(browser);
  await signedIn(tab.page, url, rootKey);
  await tab.page.goto(url + path);
  await tab.page.getByRole("heading", { name: heading, exact: true }).waitFor();
  return tab;
}
