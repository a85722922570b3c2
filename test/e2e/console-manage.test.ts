/**
 * The console's rate limits, identities, permissions and roles pages in Chromium (playwright-core)
 * against the app under `bun run`: each list renders what the API holds, a create and a delete
 * made in the browser (the delete after a confirmation) are what the API then answers, and a
 * limit tried in the box shows the API's answer. Needs chromium.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { startHarness, type Harness } from "../support/harness.ts";
import { createRole } from "../support/contract.ts";
import { BrowserSession, type ConsolePage, openSignedIn } from "../support/browser.ts";
import { missing, requireTool, skipWithout } from "../support/tools.ts";

const chromium = missing.chromium();

describe.skipIf(skipWithout(chromium, "the console's rate limits, identities, permissions and roles in Chromium"))("the console's management pages in Chromium", () => {
  let h: Harness;
  let browser: BrowserSession;

  beforeAll(async () => {
    requireTool(chromium);
    h = await startHarness();
    browser = new BrowserSession();
  });

  afterAll(async () => {
    await browser?.close();
    await h?.stop();
  });

  const at = (path: string, heading: string, rootKey = h.rootKey): Promise<ConsolePage> => openSignedIn(browser, h.url, rootKey, path, heading);

  const dialog = (page: Page) => page.getByRole("dialog");
  const confirm = async (page: Page, label: string) => {
    await dialog(page).getByRole("button", { name: label }).click();
    await dialog(page).waitFor({ state: "detached" });
  };

  test("rate limits: the namespace listed, an override set and deleted (after asking) as the API then answers, a limit tried", async () => {
    await h.post("/v2/ratelimit.limit", { namespace: "email", identifier: "u1", limit: 5, duration: 60_000 });
    await h.post("/v2/ratelimit.setOverride", { namespace: "email", identifier: "vip", limit: 100, duration: 60_000 });
    const tab = await at("/console/ratelimits", "Rate limits");
    const { page } = tab;
    try {
      await page.getByRole("link", { name: "email" }).click();
      await page.getByRole("heading", { name: "Overrides of email" }).waitFor();
      await page.getByRole("cell", { name: "vip", exact: true }).waitFor();

      await page.getByRole("button", { name: "Set override" }).click();
      await dialog(page).getByLabel("Identifier").fill("partner-*");
      await dialog(page).getByLabel("Limit").fill("7");
      await dialog(page).getByRole("button", { name: "Save" }).click();
      await page.getByRole("cell", { name: "partner-*", exact: true }).waitFor();
      const overrides = async () => ((await h.post("/v2/ratelimit.listOverrides", { namespace: "email" })).body.data as Array<{ identifier: string; limit: number }>);
      expect((await overrides()).map((o) => [o.identifier, o.limit]).toSorted()).toEqual([["partner-*", 7], ["vip", 100]]);

      await page.getByLabel("Search by identifier").fill("partner");
      await page.getByRole("cell", { name: "vip", exact: true }).waitFor({ state: "detached" });
      await page.getByRole("button", { name: "Delete override partner-*" }).click();
      await dialog(page).getByRole("button", { name: "Cancel" }).click();
      expect((await overrides()).length).toBe(2);
      await page.getByRole("button", { name: "Delete override partner-*" }).click();
      await confirm(page, "Delete override");
      await page.getByText("No overrides.").waitFor();
      expect((await overrides()).map((o) => o.identifier)).toEqual(["vip"]);

      const tryBox = page.getByRole("form", { name: "Try a limit" });
      await tryBox.getByLabel("Identifier to limit").fill("vip");
      await tryBox.getByRole("button", { name: "Check" }).click();
      const answer = await page.getByTestId("limit-answer").textContent();
      expect(answer).toContain("Limit100");
      expect(answer).toContain("Remaining99");
      expect(tab.errors).toEqual([]);
    } finally {
      await tab.close();
    }
  });

  test("rate limits: a key that may read overrides but not the audit log sees the namespaces; one granted a namespace sees it alone", async () => {
    for (const namespace of ["sms", "push"]) await h.post("/v2/ratelimit.limit", { namespace, identifier: "u1", limit: 5, duration: 60_000 });
    const smsId = (await h.post("/v2/ratelimit.listNamespaces", { search: "sms" })).body.data[0].id as string;
    const everyKey = await h.rootKeyWith(["ratelimit.*.read_override"]);
    const every = await at("/console/ratelimits", "Rate limits", everyKey);
    try {
      for (const name of ["sms", "push"]) await every.page.getByRole("link", { name, exact: true }).waitFor();
      expect(every.requests.filter((url) => url.includes("audit."))).toEqual([]);
    } finally {
      await every.close();
    }
    const scoped = await at("/console/ratelimits", "Rate limits", await h.rootKeyWith([`ratelimit.${smsId}.read_override`]));
    const { page } = scoped;
    try {
      await page.getByRole("link", { name: "sms", exact: true }).click();
      await page.getByRole("heading", { name: "Overrides of sms" }).waitFor();
      await page.getByText("No overrides.").waitFor();
      expect(await page.getByRole("link", { name: "push", exact: true }).count()).toBe(0);
      expect(await page.getByRole("button", { name: "Set override" }).count()).toBe(0);
    } finally {
      await scoped.close();
    }
  });

  test("identities: listed, created, edited and deleted (after asking), as the API then answers", async () => {
    await h.post("/v2/identities.createIdentity", { externalId: "acme", meta: { plan: "pro" } });
    const tab = await at("/console/identities", "Identities");
    const { page } = tab;
    try {
      await page.getByRole("cell", { name: "acme", exact: true }).waitFor();
      await page.getByRole("button", { name: "Create identity" }).click();
      await dialog(page).getByLabel("External id").fill("globex");
      await dialog(page).getByLabel("Meta (JSON)").fill('{"plan": "free"}');
      await dialog(page).getByRole("button", { name: "Create" }).click();
      await page.getByRole("cell", { name: "globex", exact: true }).waitFor();
      expect((await h.post("/v2/identities.getIdentity", { identity: "globex" })).body.data.meta).toEqual({ plan: "free" });

      await page.getByRole("button", { name: "Edit identity globex" }).click();
      await dialog(page).getByLabel("Meta (JSON)").fill('{"plan": "team"}');
      await dialog(page).getByRole("button", { name: "Save" }).click();
      await page.getByText('{"plan":"team"}').waitFor();
      expect((await h.post("/v2/identities.getIdentity", { identity: "globex" })).body.data.meta).toEqual({ plan: "team" });

      // Its rate limits: set, then shown in the list and answered by the API.
      await page.getByRole("button", { name: "Edit identity globex" }).click();
      await dialog(page).getByLabel("Rate limits (JSON)").fill('[{"name": "requests", "limit": 100, "duration": 60000}]');
      await dialog(page).getByRole("button", { name: "Save" }).click();
      await page.getByText("requests: 100/60000 ms").waitFor();
      expect((await h.post("/v2/identities.getIdentity", { identity: "globex" })).body.data.ratelimits)
        .toEqual([expect.objectContaining({ name: "requests", limit: 100, duration: 60000 })]);

      await page.getByRole("button", { name: "Delete identity globex" }).click();
      await confirm(page, "Delete identity");
      await page.getByRole("cell", { name: "globex", exact: true }).waitFor({ state: "detached" });
      expect((await h.post("/v2/identities.getIdentity", { identity: "globex" })).status).toBe(404);
      expect(tab.errors).toEqual([]);
    } finally {
      await tab.close();
    }
  });

  test("permissions: listed, created and deleted (after asking), as the API then answers", async () => {
    await h.post("/v2/permissions.createPermission", { name: "documents.read", slug: "documents.read" });
    const tab = await at("/console/permissions", "Permissions");
    const { page } = tab;
    try {
      await page.getByRole("cell", { name: "documents.read", exact: true }).first().waitFor();
      await page.getByRole("button", { name: "Create permission" }).click();
      await dialog(page).getByLabel("Slug").fill("documents.write");
      await dialog(page).getByLabel("Description").fill("Edit documents");
      await dialog(page).getByRole("button", { name: "Create" }).click();
      await page.getByRole("cell", { name: "Edit documents", exact: true }).waitFor();
      expect((await h.post("/v2/permissions.getPermission", { permission: "documents.write" })).body.data).toMatchObject({ slug: "documents.write", description: "Edit documents" });

      await page.getByRole("button", { name: "Delete permission documents.write" }).click();
      await confirm(page, "Delete permission");
      await page.getByRole("cell", { name: "Edit documents", exact: true }).waitFor({ state: "detached" });
      expect((await h.post("/v2/permissions.getPermission", { permission: "documents.write" })).status).toBe(404);
      expect(tab.errors).toEqual([]);
    } finally {
      await tab.close();
    }
  });

  test("roles: listed, created, their permissions edited and deleted (after asking), as the API then answers", async () => {
    await createRole(h, "viewer", ["reports.read"]);
    const tab = await at("/console/roles", "Roles");
    const { page } = tab;
    try {
      await page.getByRole("cell", { name: "viewer", exact: true }).waitFor();
      await page.getByRole("button", { name: "Create role" }).click();
      await dialog(page).getByLabel("Name").fill("editor");
      await dialog(page).getByLabel("Permissions").fill("reports.read, reports.write");
      await dialog(page).getByRole("button", { name: "Create" }).click();
      await page.getByRole("cell", { name: "editor", exact: true }).waitFor();
      const slugs = async () => ((await h.post("/v2/permissions.getRole", { role: "editor" })).body.data.permissions as Array<{ slug: string }>).map((p) => p.slug).toSorted();
      expect(await slugs()).toEqual(["reports.read", "reports.write"]);

      await page.getByRole("button", { name: "Edit role editor" }).click();
      await dialog(page).getByLabel("Permissions").fill("reports.write");
      await dialog(page).getByRole("button", { name: "Save" }).click();
      await dialog(page).waitFor({ state: "detached" });
      expect(await slugs()).toEqual(["reports.write"]);

      await page.getByRole("button", { name: "Delete role editor" }).click();
      await confirm(page, "Delete role");
      await page.getByRole("cell", { name: "editor", exact: true }).waitFor({ state: "detached" });
      expect((await h.post("/v2/permissions.getRole", { role: "editor" })).status).toBe(404);
      expect(tab.errors).toEqual([]);
    } finally {
      await tab.close();
    }
  });
});
