/**
 * The web console in a real Chromium (Debian's, driven by playwright-core) against the app under
 * `bun run` (the harness): signing in with the root key, and with a wrong one. Needs chromium.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../support/harness.ts";
import { BrowserSession, openPage, signIn, signedIn } from "../support/browser.ts";
import { missing, requireTool, skipWithout } from "../support/tools.ts";

const chromium = missing.chromium();

describe.skipIf(skipWithout(chromium, "the console in Chromium"))("the console in Chromium", () => {
  let h: Harness;
  let browser: BrowserSession;
  const logLines: string[] = [];

  beforeAll(async () => {
    requireTool(chromium);
    h = await startHarness({ logLines });
    browser = new BrowserSession();
  });

  afterAll(async () => {
    await browser?.close();
    await h?.stop();
  });

  test("signs in with a root key: the overview names the workspace; the key is in sessionStorage only, never in a URL or the access log", async () => {
    const { page, requests, errors, close } = await openPage(browser);
    try {
      await signedIn(page, h.url, h.rootKey);
      expect(await page.getByRole("main").textContent()).toContain("default");
      expect(await page.evaluate(() => Object.values(sessionStorage))).toEqual([h.rootKey]);
      expect(await page.evaluate("[localStorage.length, document.cookie]")).toEqual([0, ""]);
      expect(requests.filter((u) => u.includes(h.rootKey))).toEqual([]);
      expect(requests.filter((u) => new URL(u).origin !== h.url)).toEqual([]);
      expect(logLines.some((l) => l.includes("/v2/rootKeys.whoami"))).toBe(true);
      expect(logLines.filter((l) => l.includes(h.rootKey))).toEqual([]);
      expect(errors).toEqual([]);
      // A reload keeps the session; signing out forgets the key.
      await page.reload();
      await page.getByRole("heading", { name: "Overview" }).waitFor();
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByLabel("Root key").waitFor();
      expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    } finally {
      await close();
    }
  });

  test("the overview shows the workspace's use of each quota, with the variable that sets it", async () => {
    const { page, errors, close } = await openPage(browser);
    try {
      await signedIn(page, h.url, h.rootKey);
      await page.getByRole("heading", { name: "Quotas" }).waitFor();
      const row = page.getByRole("row", { name: /TOLLGATE_WORKSPACE_MAX_KEYS/ });
      await row.waitFor();
      expect(await row.textContent()).toContain("1,000,000");
      expect(await page.getByRole("row", { name: /TOLLGATE_WORKSPACE_STORAGE_MB/ }).textContent()).toContain("1024 MiB");
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  });

  test("a wrong root key: the API's 401 is shown in plain words and nothing is kept", async () => {
    const { page, close } = await openPage(browser);
    try {
      await signIn(page, h.url, "tg_wrong_key_0000000000");
      const alert = page.getByRole("alert");
      await alert.waitFor();
      const text = await alert.textContent();
      expect(text).toContain("401");
      expect(text).toContain("This root key is not known to this tollgate.");
      expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    } finally {
      await close();
    }
  });
});
