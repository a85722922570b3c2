/**
 * Screenshots of every console page into docs/console/, at desktop (1280×800) and phone
 * (375×812) widths, light scheme, one pixel per CSS pixel (small PNGs), against the app with
 * sample data on a fixed clock (the same pictures on every run). Not part of the test suite: run
 *
 *   bun run test/e2e/screenshots.ts
 *
 * after a visible change to the console, and commit the PNGs. Needs chromium.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { startHarness, type Harness } from "../support/harness.ts";
import { createApi, createKey, createRole, TEST_ACTOR } from "../support/contract.ts";
import { launchBrowser, signedIn } from "../support/browser.ts";

const OUT_DIR = join(import.meta.dir, "../../docs/console");
const START_MS = Date.UTC(2026, 5, 1, 0, 0);
const HOUR_MS = 3_600_000;
const HOURS = 36;
const WIDTHS = { desktop: { width: 1280, height: 800 }, phone: { width: 375, height: 812 } } as const;

interface Sample {
  apiId: string;
  keyId: string;
}

/** APIs, keys verified over the last hours with a few outcomes, limits, identities, permissions and roles. */
async function seed(h: Harness): Promise<Sample> {
  await h.running.services.workspaces.setAnalytics("default", true, TEST_ACTOR);
  const apiId = await createApi(h, "payments");
  await createApi(h, "search");
  await createRole(h, "billing-admin", ["invoices.read", "invoices.write"]);
  await createRole(h, "viewer", ["invoices.read"]);
  await h.post("/v2/permissions.createPermission", { name: "reports.export", slug: "reports.export", description: "Download reports as CSV" });
  for (const [externalId, plan] of [["acme", "enterprise"], ["globex", "pro"], ["initech", "free"]] as const) {
    await h.post("/v2/identities.createIdentity", { externalId, meta: { plan }, ratelimits: [{ name: "requests", limit: 1000, duration: 60_000 }] });
  }
  const checkout = await createKey(h, { apiId, name: "checkout", externalId: "acme", meta: { team: "web" }, roles: ["billing-admin"], ratelimits: [{ name: "requests", limit: 100, duration: 60_000 }] });
  const mobile = await createKey(h, { apiId, name: "mobile app", externalId: "globex", credits: { remaining: 40 } });
  const legacy = await createKey(h, { apiId, name: "legacy", enabled: false });
  for (let hour = 0; hour < HOURS; hour++) {
    const verifies = [[checkout.key, 3 + ((hour * 7) % 9)], [mobile.key, 1 + (hour % 3)], [legacy.key, hour % 5 === 0 ? 2 : 0]] as const;
    for (const [key, times] of verifies) for (let i = 0; i < times; i++) await h.post("/v2/keys.verifyKey", { key });
    await h.running.services.verificationEvents.flush();
    h.clock.advance(HOUR_MS);
  }
  await h.post("/v2/ratelimit.limit", { namespace: "email.send", identifier: "user_1", limit: 10, duration: 60_000 });
  await h.post("/v2/ratelimit.limit", { namespace: "login", identifier: "203.0.113.7", limit: 5, duration: 60_000 });
  for (const [identifier, limit] of [["vip_*", 1000], ["user_42", 50], ["abuser", 0]] as const) {
    await h.post("/v2/ratelimit.setOverride", { namespace: "email.send", identifier, limit, duration: 60_000 });
  }
  return { apiId, keyId: checkout.keyId };
}

async function shoot(page: Page, name: string, width: keyof typeof WIDTHS): Promise<void> {
  await page.waitForLoadState("networkidle");
  await page.screenshot({ path: join(OUT_DIR, `${name}-${width}.png`) });
}

async function shootAll(browser: Browser, h: Harness, sample: Sample, width: keyof typeof WIDTHS): Promise<void> {
  const context = await browser.newContext({ viewport: WIDTHS[width], colorScheme: "light", deviceScaleFactor: 1 });
  const page = await context.newPage();
  await page.goto(`${h.url}/console`);
  await page.getByLabel("Root key").waitFor();
  await shoot(page, "sign-in", width);
  await signedIn(page, h.url, h.rootKey);
  await page.locator(".chart-plot canvas").first().waitFor();
  await shoot(page, "overview", width);
  const pages: Array<[string, string, string]> = [
    ["apis", "/console/apis", "APIs"],
    ["api", `/console/apis/${sample.apiId}`, "payments"],
    ["key", `/console/apis/${sample.apiId}/keys/${sample.keyId}`, "checkout"],
    ["ratelimits", "/console/ratelimits/email.send", "Rate limits"],
    ["identities", "/console/identities", "Identities"],
    ["permissions", "/console/permissions", "Permissions"],
    ["roles", "/console/roles", "Roles"],
    ["audit", "/console/audit", "Audit log"],
  ];
  for (const [name, path, heading] of pages) {
    await page.goto(h.url + path);
    await page.getByRole("heading", { name: heading, exact: true }).waitFor();
    await shoot(page, name, width);
  }
  await page.goto(`${h.url}/console/analytics`);
  await page.getByRole("button", { name: "Run" }).click();
  await page.getByRole("heading", { name: /^Result/ }).waitFor();
  await shoot(page, "analytics", width);
  await context.close();
}

mkdirSync(OUT_DIR, { recursive: true });
const h = await startHarness({ startMs: START_MS });
const browser = await launchBrowser();
try {
  const sample = await seed(h);
  for (const width of Object.keys(WIDTHS) as Array<keyof typeof WIDTHS>) await shootAll(browser, h, sample, width);
  console.log(`Screenshots written to ${OUT_DIR}`);
} finally {
  await browser.close();
  await h.stop();
}
