/**
 * The console by keyboard, at 375 px and in both colour schemes (Chromium, playwright-core): every
 * action reachable by Tab and Enter with a visible focus ring, dialogs that keep focus and give it
 * back on Escape, every input labelled, no sideways scrolling on a phone, dark when asked. Needs chromium.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { startHarness, type Harness } from "../support/harness.ts";
import { createApi, createKey, TEST_ACTOR } from "../support/contract.ts";
import { launchBrowser, openPage, signedIn } from "../support/browser.ts";
import { missing, requireTool, skipWithout } from "../support/tools.ts";

const chromium = missing.chromium();
const MAX_TABS = 40;

describe.skipIf(skipWithout(chromium, "the console's keyboard, phone and colour checks in Chromium"))("the console by keyboard, on a phone, light and dark", () => {
  let h: Harness;
  let browser: Browser;
  let pages: string[];

  beforeAll(async () => {
    requireTool(chromium);
    h = await startHarness();
    h.running.services.workspaces.setAnalytics("default", true, TEST_ACTOR);
    const apiId = await createApi(h, "a-rather-long-api-name-for-a-narrow-screen");
    const { keyId, key } = await createKey(h, { apiId, name: "phone", externalId: "customer-with-a-long-external-id", permissions: ["docs.read"], meta: { plan: "pro" } });
    await h.post("/v2/keys.verifyKey", { key });
    await h.running.services.verificationEvents.flush();
    pages = ["/console", "/console/apis", `/console/apis/${apiId}`, `/console/apis/${apiId}/keys/${keyId}`];
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await h?.stop();
  });

  /** Presses Tab until the focused element's text is `label`; false if it never is. */
  async function tabTo(page: Page, label: string): Promise<boolean> {
    for (let i = 0; i < MAX_TABS; i++) {
      await page.keyboard.press("Tab");
      if ((await page.evaluate("document.activeElement?.textContent?.trim()")) === label) return true;
    }
    return false;
  }

  test("Tab reaches the navigation and the actions, Enter opens a dialog with focus inside, Escape closes it and focus returns", async () => {
    const { page, close } = await openPage(browser);
    try {
      await signedIn(page, h.url, h.rootKey);
      expect(await tabTo(page, "APIs & keys")).toBe(true);
      await page.keyboard.press("Enter");
      await page.getByRole("heading", { name: "APIs", exact: true }).waitFor();
      expect(await tabTo(page, "Create API")).toBe(true);
      expect(await page.evaluate("getComputedStyle(document.activeElement).outlineStyle")).toBe("solid");
      await page.keyboard.press("Enter");
      await page.getByRole("dialog").waitFor();
      expect(await page.evaluate("document.activeElement.closest('dialog') !== null")).toBe(true);
      // Focus stays inside the open dialog however far one tabs.
      for (let i = 0; i < 6; i++) {
        await page.keyboard.press("Tab");
        expect(await page.evaluate("document.activeElement.closest('dialog') !== null || document.activeElement === document.body")).toBe(true);
      }
      await page.keyboard.press("Escape");
      await page.getByRole("dialog").waitFor({ state: "detached" });
      expect(await page.evaluate("document.activeElement?.textContent?.trim()")).toBe("Create API");
    } finally {
      await close();
    }
  });

  test("every input on every page has a label", async () => {
    const { page, close } = await openPage(browser);
    try {
      await signedIn(page, h.url, h.rootKey);
      for (const path of pages) {
        await page.goto(h.url + path);
        await page.getByRole("main").getByRole("heading").first().waitFor();
        await page.waitForLoadState("networkidle");
        const unlabelled = await page.evaluate("[...document.querySelectorAll('input, select, textarea')].filter((e) => e.labels.length === 0 && !e.getAttribute('aria-label')).map((e) => e.outerHTML)");
        expect({ path, unlabelled }).toEqual({ path, unlabelled: [] });
      }
    } finally {
      await close();
    }
  });

  test("at 375 px no page scrolls sideways", async () => {
    const { page, close, errors } = await openPage(browser, { width: 375 });
    try {
      await signedIn(page, h.url, h.rootKey);
      for (const path of pages) {
        await page.goto(h.url + path);
        await page.getByRole("main").getByRole("heading").first().waitFor();
        // The overview and the key's page draw a chart once their query answers.
        if (path === "/console" || path.includes("/keys/")) await page.locator("figure.chart canvas").first().waitFor();
        expect({ path, scrollWidth: await page.evaluate("document.documentElement.scrollWidth") }).toEqual({ path, scrollWidth: 375 });
      }
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  });

  test("prefers-color-scheme: dark gives the dark palette, light the light one", async () => {
    const background = async (colorScheme: "light" | "dark") => {
      const { page, close } = await openPage(browser, { colorScheme });
      try {
        await page.goto(`${h.url}/console`);
        await page.getByLabel("Root key").waitFor();
        return await page.evaluate("getComputedStyle(document.body).backgroundColor");
      } finally {
        await close();
      }
    };
    expect(await background("light")).toBe("rgb(255, 255, 255)");
    expect(await background("dark")).toBe("rgb(13, 17, 23)");
  });
});
