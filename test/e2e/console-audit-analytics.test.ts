/**
 * The console's audit log and analytics pages in Chromium (playwright-core), and what a read-only
 * root key sees on every page of rate limits, identities, permissions, roles, audit and analytics:
 * the lists, and no write action. The audit log filters and shows an entry's details; an analytics
 * query answers as a table and a chart, and a syntax error's position is marked. Needs chromium.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../support/harness.ts";
import { createApi, createKey, createRole, TEST_ACTOR } from "../support/contract.ts";
import { BrowserSession, openPage, type ConsolePage, signedIn, openSignedIn } from "../support/browser.ts";
import { missing, requireTool, skipWithout } from "../support/tools.ts";

const chromium = missing.chromium();
const WRITE_BUTTONS = ["Set override", "Delete", "Check", "Create identity", "Edit", "Create permission", "Create role"];
const READ_ONLY = ["ratelimit.*.read_override", "identity.*.read_identity", "rbac.*.read_permission", "rbac.*.read_role", "audit.*.read_log", "api.*.read_analytics"];

describe.skipIf(skipWithout(chromium, "the console's audit log and analytics in Chromium"))("the console's audit log and analytics in Chromium", () => {
  let h: Harness;
  let browser: BrowserSession;
  let keyId: string;

  beforeAll(async () => {
    requireTool(chromium);
    h = await startHarness();
    await h.running.services.workspaces.setAnalytics("default", true, TEST_ACTOR);
    const apiId = await createApi(h, "reports");
    const created = await createKey(h, { apiId, name: "dashboard" });
    keyId = created.keyId;
    await h.post("/v2/keys.verifyKey", { key: created.key });
    await h.running.services.verificationEvents.flush();
    await h.post("/v2/ratelimit.limit", { namespace: "email", identifier: "u1", limit: 5, duration: 60_000 });
    await h.post("/v2/ratelimit.setOverride", { namespace: "email", identifier: "vip", limit: 100, duration: 60_000 });
    await h.post("/v2/identities.createIdentity", { externalId: "acme" });
    await h.post("/v2/permissions.createPermission", { name: "documents.read", slug: "documents.read" });
    await createRole(h, "viewer", ["documents.read"]);
    browser = new BrowserSession();
  });

  afterAll(async () => {
    await browser?.close();
    await h?.stop();
  });

  const at = (path: string, heading: string, rootKey = h.rootKey): Promise<ConsolePage> => openSignedIn(browser, h.url, rootKey, path, heading);

  test("audit log: entries listed, filtered by event and by resource, an entry's details", async () => {
    const tab = await at("/console/audit", "Audit log");
    const { page } = tab;
    try {
      await page.getByRole("cell", { name: "key.create", exact: true }).waitFor();
      expect(await page.getByRole("cell", { name: "identity.create", exact: true }).count()).toBe(1);
      await page.getByLabel("Event").fill("key.create");
      await page.getByRole("button", { name: "Filter" }).click();
      await page.getByRole("cell", { name: "identity.create", exact: true }).waitFor({ state: "detached" });
      expect(await page.getByRole("cell", { name: "key.create", exact: true }).count()).toBe(1);

      await page.getByRole("button", { name: "Clear" }).click();
      await page.getByLabel("Resource id").fill(keyId);
      await page.getByRole("button", { name: "Filter" }).click();
      await page.getByRole("cell", { name: "api.create", exact: true }).waitFor({ state: "detached" });
      await page.getByRole("button", { name: /^Details of / }).click();
      const details = page.getByRole("dialog", { name: "Audit log entry" });
      await details.getByText(keyId, { exact: true }).waitFor();
      expect(await details.textContent()).toContain("key.create");
      expect(await details.textContent()).toContain("root_key");
      expect(tab.errors).toEqual([]);
    } finally {
      await tab.close();
    }
  });

  test("analytics: a query answers as a table and a chart; a syntax error's position is marked in the box", async () => {
    const tab = await at("/console/analytics", "Analytics");
    const { page } = tab;
    try {
      await page.getByRole("button", { name: "Run" }).click();
      await page.getByRole("cell", { name: "VALID", exact: true }).waitFor();
      expect(await page.getByRole("img", { name: /^Result over time: VALID 1$/ }).count()).toBe(1);
      expect(await page.getByText("key_verifications_per_month_v1").count()).toBe(1);

      await page.getByLabel("SQL").fill("SELECT time, outcome\nFROM key_verifications_v1\nGROUP outcome");
      await page.getByRole("button", { name: "Run" }).click();
      const mark = page.getByTestId("sql-error-position");
      await mark.waitFor();
      expect(await mark.textContent()).toContain("line 3, column 1");
      expect(await page.getByRole("alert").textContent()).toContain("400");
      const selected = await page.evaluate("(() => { const t = document.querySelector('textarea'); return [document.activeElement === t, t.value.slice(t.selectionStart, t.selectionEnd)]; })()");
      expect(selected).toEqual([true, "GROUP"]);
      expect(tab.errors.filter((e) => !e.includes("400"))).toEqual([]);
    } finally {
      await tab.close();
    }
  });

  /** Each page, its heading and a text its list shows once loaded. */
  const PAGES: ReadonlyArray<[string, string, string]> = [
    ["/console/ratelimits/email", "Rate limits", "vip"],
    ["/console/identities", "Identities", "acme"],
    ["/console/permissions", "Permissions", "documents.read"],
    ["/console/roles", "Roles", "viewer"],
    ["/console/audit", "Audit log", "identity.create"],
    ["/console/analytics", "Analytics", "key_verifications_v1"],
  ];

  test("at 375 px none of these pages scrolls sideways, and every input has a label", async () => {
    const tab = await openPage(browser, { width: 375 });
    const { page } = tab;
    try {
      await signedIn(page, h.url, h.rootKey);
      for (const [path, heading, shown] of PAGES) {
        await page.goto(h.url + path);
        await page.getByRole("heading", { name: heading, exact: true }).waitFor();
        await page.getByText(shown, { exact: true }).first().waitFor();
        expect({ path, scrollWidth: await page.evaluate("document.documentElement.scrollWidth") }).toEqual({ path, scrollWidth: 375 });
        const unlabelled = await page.evaluate("[...document.querySelectorAll('input, select, textarea')].filter((e) => e.labels.length === 0 && !e.getAttribute('aria-label')).map((e) => e.outerHTML)");
        expect({ path, unlabelled }).toEqual({ path, unlabelled: [] });
      }
      expect(tab.errors).toEqual([]);
    } finally {
      await tab.close();
    }
  });

  test("a read-only root key sees the lists and no write action on these pages", async () => {
    const pages = PAGES;
    const tab = await at("/console", "Overview", await h.rootKeyWith(READ_ONLY));
    const { page } = tab;
    try {
      for (const [path, heading, shown] of pages) {
        await page.goto(h.url + path);
        await page.getByRole("heading", { name: heading, exact: true }).waitFor();
        await page.getByText(shown, { exact: true }).first().waitFor();
        for (const name of WRITE_BUTTONS) {
          const count = await page.getByRole("button", { name: new RegExp(`^${name}\\b`) }).count();
          expect({ path, name, count }).toEqual({ path, name, count: 0 });
        }
      }
    } finally {
      await tab.close();
    }
  });
});
