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

export interface ConsolePage {
  page: Page;
  /** Every URL the page requested so far. */
  requests: string[];
  /** Console errors and uncaught exceptions (a CSP violation shows up here). */
  errors: string[];
  close(): Promise<void>;
}

/** A fresh context (its own sessionStorage) at `width` px, recording requests and errors. */
export async function openPage(browser: Browser, opts: { width?: number; colorScheme?: "light" | "dark" } = {}): Promise<ConsolePage> {
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

/** Signs in on the console at `url` with `rootKey`, waiting for the overview. */
export async function signIn(page: Page, url: string, rootKey: string): Promise<void> {
  await page.goto(`${url}/console`);
  await page.getByLabel("Root key").fill(rootKey);
  await page.getByRole("button", { name: "Sign in" }).click();
}
