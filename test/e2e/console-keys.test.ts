/**
 * The console's APIs and keys in Chromium (playwright-core) against the app under `bun run`: an API
 * and a key created in the browser, the key shown once; verified through the API and seen on the
 * overview's chart, and ratelimit.limit decisions on the decisions chart; disabled in the browser
 * and refused by the API as DISABLED; both changes in the audit log; a read-only root key sees no
 * write actions, and a write the API refuses shows its 403.
 * Needs chromium.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { ALL_GRANTS } from "../../src/services/auth/index.ts";
import { startHarness, type Harness } from "../support/harness.ts";
import { createApi, createKey, TEST_ACTOR } from "../support/contract.ts";
import { BrowserSession, openPage, type ConsolePage, signedIn } from "../support/browser.ts";
import { missing, requireTool, skipWithout } from "../support/tools.ts";

const chromium = missing.chromium();
const WRITE_BUTTONS = ["Create API", "Create key", "Disable", "Enable", "Set credits", "Reroll", "Delete", "Add"];

describe.skipIf(skipWithout(chromium, "the console's APIs and keys in Chromium"))("the console's APIs and keys in Chromium", () => {
  let h: Harness;
  let browser: BrowserSession;
  let tab: ConsolePage;

  beforeAll(async () => {
    requireTool(chromium);
    h = await startHarness();
    await h.running.services.workspaces.setAnalytics("default", true, TEST_ACTOR);
    browser = new BrowserSession();
  });

  afterAll(async () => {
    await browser?.close();
    await h?.stop();
  });

  const heading = (page: Page, name: string) => page.getByRole("heading", { name, exact: true }).waitFor();

  test("create an API and a key (shown once), verify it, see it and a rate-limit decision on the overview, disable it: DISABLED, and both changes audited", async () => {
    tab = await openPage(browser);
    const { page } = tab;
    await signedIn(page, h.url, h.rootKey);
    await page.getByRole("link", { name: "APIs & keys" }).click();
    await page.getByRole("button", { name: "Create API" }).click();
    await page.getByRole("dialog").getByLabel("Name").fill("payments");
    await page.getByRole("dialog").getByRole("button", { name: "Create" }).click();
    await heading(page, "payments");
    const apiId = page.url().split("/").pop()!;

    await page.getByRole("button", { name: "Create key" }).click();
    await page.getByRole("dialog").getByLabel("Name").fill("checkout");
    await page.getByRole("dialog").getByRole("button", { name: "Create key" }).click();
    const key = (await page.getByTestId("new-key").textContent())!;
    expect(key.length).toBeGreaterThan(16);
    await page.getByRole("button", { name: "Done" }).click();
    await page.getByRole("link", { name: "checkout" }).click();
    await heading(page, "checkout");
    // The way back names the API.
    await page.getByRole("link", { name: "payments" }).waitFor();
    expect(await page.content()).not.toContain(key);
    const keyId = page.url().split("/").pop()!;

    const verified = await h.post("/v2/keys.verifyKey", { key });
    expect(verified.body.data).toMatchObject({ valid: true, code: "VALID", keyId });
    for (let i = 0; i < 2; i++) await h.post("/v2/ratelimit.limit", { namespace: "checkout", identifier: "u", limit: 1, duration: 60_000 });
    // The writer flushes on a timer; the test flushes it instead of waiting.
    await h.running.services.verificationEvents.flush();
    await page.getByRole("link", { name: "Overview" }).click();
    const chart = page.getByRole("img", { name: /^Verifications by outcome: VALID 1$/ });
    await chart.waitFor();
    await page.getByRole("img", { name: /^Rate-limit decisions: passed 1, blocked 1$/ }).waitFor();
    expect(await page.locator(".chart-plot canvas").count()).toBe(2);
    expect(await page.getByRole("row", { name: new RegExp(keyId) }).textContent()).toContain("1");

    await page.goto(`${h.url}/console/apis/${apiId}/keys/${keyId}`);
    await page.getByRole("button", { name: "Disable" }).click();
    await page.getByRole("button", { name: "Enable" }).waitFor();
    expect(await page.getByTestId("key-status").textContent()).toBe("disabled");
    expect((await h.post("/v2/keys.verifyKey", { key })).body.data).toMatchObject({ valid: false, code: "DISABLED" });

    const logs = (await h.post("/v2/audit.listLogs", { resourceId: keyId })).body.data as Array<{ event: string; actor: { type: string } }>;
    expect(logs.map((l) => l.event).toSorted()).toEqual(["key.create", "key.update"]);
    expect(logs.every((l) => l.actor.type === "root_key")).toBe(true);
    expect(tab.errors).toEqual([]);
    expect(tab.requests.filter((u) => new URL(u).origin !== h.url)).toEqual([]);
    await tab.close();
  });

  test("a read-only root key sees no write action on any page", async () => {
    const apiId = await createApi(h, "read-only-view");
    const { keyId } = await createKey(h, { apiId, name: "seen", permissions: ["docs.read"] });
    const { page, close } = await openPage(browser);
    try {
      await signedIn(page, h.url, await h.rootKeyWith(["api.*.read_api", "api.*.read_key", "api.*.read_analytics"]));
      for (const path of ["/console/apis", `/console/apis/${apiId}`, `/console/apis/${apiId}/keys/${keyId}`]) {
        await page.goto(h.url + path);
        await page.getByRole("main").getByRole("heading").first().waitFor();
        await page.getByText(/seen|read-only-view|APIs/).first().waitFor();
        for (const name of WRITE_BUTTONS) expect({ path, name, count: await page.getByRole("button", { name, exact: true }).count() }).toEqual({ path, name, count: 0 });
        expect(await page.getByRole("button", { name: /^Remove / }).count()).toBe(0);
      }
      expect(await page.getByText("docs.read").count()).toBe(1);
    } finally {
      await close();
    }
  });

  test("a write the API refuses (the key lost update_key after sign-in) shows the API's 403 and changes nothing", async () => {
    const apiId = await createApi(h, "forced-write");
    const { keyId } = await createKey(h, { apiId });
    const rootKey = await h.running.services.workspaces.createRootKey({ workspace: "default", name: "shrinking", permissions: [...ALL_GRANTS] }, TEST_ACTOR);
    const { page, close } = await openPage(browser);
    try {
      await signedIn(page, h.url, rootKey.key);
      await page.goto(`${h.url}/console/apis/${apiId}/keys/${keyId}`);
      await page.getByRole("button", { name: "Disable" }).waitFor();
      h.embedded.storage.sqlite.run("UPDATE root_keys SET permissions = ? WHERE id = ?", [JSON.stringify(["api.*.read_api", "api.*.read_key"]), rootKey.id]);
      h.running.services.auth.invalidate();
      await page.getByRole("button", { name: "Disable" }).click();
      const alert = page.getByRole("alert");
      await alert.waitFor();
      expect(await alert.textContent()).toContain("403");
      expect(await alert.textContent()).toContain("update_key");
      expect((await h.post("/v2/keys.getKey", { keyId })).body.data.enabled).toBe(true);
    } finally {
      await close();
    }
  });
});
