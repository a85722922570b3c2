/**
 * The console by keyboard, at 375 px and in both colour schemes (Chromium, playwright-core): every
 * action reachable by Tab and Enter with a visible focus ring, dialogs that keep focus and give it
 * back on Escape, every input labelled, no sideways scrolling on a phone, dark when asked. Needs chromium.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { startHarness, type Harness } from "../support/harness.ts";
import { createApi, createKey, TEST_ACTOR } from "../support/contract.ts";
import { BrowserSession, openPage, signedIn } from "../support/browser.ts";
import { missing, requireTool, skipWithout } from "../support/tools.ts";

const chromium = missing.chromium();
const MAX_TABS = 40;
/**
 * Forty key presses, each with a look at the focus, on a page reloaded after sign-in: seconds on an
 * idle machine, more on a busy one. Every step waits for a state; this only bounds a hang.
 */
const KEYBOARD_TEST_TIMEOUT_MS = 60_000;
const API_NAME = "a-rather-long-api-name-for-a-narrow-screen";

describe.skipIf(skipWithout(chromium, "the console's keyboard, phone and colour checks in Chromium"))("the console by keyboard, on a phone, light and dark", () => {
  let h: Harness;
  let browser: BrowserSession;
  let pages: string[];

  beforeAll(async () => {
    requireTool(chromium);
    h = await startHarness();
    await h.running.services.workspaces.setAnalytics("default", true, TEST_ACTOR);
    const apiId = await createApi(h, API_NAME);
    const { keyId, key } = await createKey(h, { apiId, name: "phone", externalId: "customer-with-a-long-external-id", permissions: ["docs.read"], meta: { plan: "pro" } });
    await h.post("/v2/keys.verifyKey", { key });
    await h.running.services.verificationEvents.flush();
    pages = ["/console", "/console/apis", `/console/apis/${apiId}`, `/console/apis/${apiId}/keys/${keyId}`];
    browser = new BrowserSession();
  });

  afterAll(async () => {
    await browser?.close();
    await h?.stop();
  });

  /** Presses Tab until the focused element's text is `label`; a miss shows the texts focus passed. */
  async function tabTo(page: Page, label: string): Promise<void> {
    const trail: string[] = [];
    for (let i = 0; i < MAX_TABS && trail.at(-1) !== label; i++) {
      await page.keyboard.press("Tab");
      trail.push(String(await page.evaluate("document.activeElement?.textContent?.trim()")));
    }
    expect({ trail, focused: trail.at(-1) }).toEqual({ trail, focused: label });
  }

  test("Tab reaches the navigation and the actions, Enter opens a dialog with focus inside, Escape closes it, focus returns and it opens again", async () => {
    const { page, close } = await openPage(browser);
    try {
      await signedIn(page, h.url, h.rootKey);
      // Tabbing starts from the top of a fresh page, not from the sign-in button that had focus and is gone.
      await page.reload();
      await page.getByRole("heading", { name: "Overview", exact: true }).waitFor();
      await tabTo(page, "APIs & keys");
      await page.keyboard.press("Enter");
      await page.getByRole("heading", { name: "APIs", exact: true }).waitFor();
      await page.getByRole("link", { name: API_NAME }).waitFor();
      await tabTo(page, "Create API");
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
      // The view followed the dialog's close: the same button opens it again.
      await page.keyboard.press("Enter");
      await page.getByRole("dialog").waitFor();
    } finally {
      await close();
    }
  }, KEYBOARD_TEST_TIMEOUT_MS);

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
