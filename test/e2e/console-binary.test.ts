/**
 * The compiled executable serves the console with no network: the binary alone in an empty
 * directory, Chromium with every host name but 127.0.0.1 unresolvable; the page loads, signs in,
 * and requested nothing from anywhere but tollgate, with no CSP violation. Needs chromium.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startServe, type Served } from "../support/cli.ts";
import { BUILD_TIMEOUT_MS, installBinary, type InstalledBinary } from "../support/binary.ts";
import { BrowserSession, openPage, signedIn } from "../support/browser.ts";
import { missing, requireTool, skipWithout } from "../support/tools.ts";

const chromium = missing.chromium();
const ROOT_KEY = "tg_root_console_binary_0123456789";

describe.skipIf(skipWithout(chromium, "the compiled executable's console in Chromium"))("the compiled executable's console, offline, in Chromium", () => {
  let installed: InstalledBinary;
  let served: Served;
  let browser: BrowserSession;

  beforeAll(async () => {
    requireTool(chromium);
    installed = await installBinary("x64");
    served = await startServe({ dataDir: join(installed.dir, "data"), program: installed.program, env: { TOLLGATE_ROOT_KEY: ROOT_KEY } });
    browser = new BrowserSession();
  }, BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await browser?.close();
    await served?.stop();
    installed?.cleanup();
  });

  test("the console loads from the executable and signs in; every request went to tollgate; no error", async () => {
    const { page, requests, errors, close } = await openPage(browser);
    try {
      await signedIn(page, served.url, ROOT_KEY);
      expect(await page.getByRole("main").textContent()).toContain("default");
      const { origin } = new URL(served.url);
      expect(requests.some((u) => /\/console\/assets\/index-[a-z0-9]+\.js$/.test(u))).toBe(true);
      expect(requests.some((u) => u === `${origin}/v2/rootKeys.whoami`)).toBe(true);
      expect(requests.filter((u) => new URL(u).origin !== origin && !u.startsWith("data:"))).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  });
});
