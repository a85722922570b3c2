/**
 * The API docs UI renders in a browser with no internet: headless Chromium (Debian's) loads
 * /docs/api from the compiled binary with every host name but 127.0.0.1 unresolvable, and its
 * network log shows that the page fetched nothing from anywhere but tollgate, and its DOM links
 * nowhere else. The rendered page shows the operations, the request fields with their descriptions
 * and code samples naming this host. Needs chromium.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServe, type Served } from "../support/cli.ts";
import { BUILD_TIMEOUT_MS, installBinary, type InstalledBinary } from "../support/binary.ts";
import { missing, requireTool, skipWithout } from "../support/tools.ts";

const chromium = missing.chromium();
const BROWSER_TIMEOUT_MS = 60_000;

interface Rendered {
  dom: string;
  /** Every URL the page itself requested (Chromium's own background requests left out). */
  pageRequests: string[];
}

/** The DOM after the page's scripts ran, and the requests the page made (from Chromium's net log). */
async function render(url: string): Promise<Rendered> {
  const profile = mkdtempSync(join(tmpdir(), "tollgate-chromium-"));
  try {
    const proc = Bun.spawn([
      "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
      `--user-data-dir=${profile}`,
      // No internet: any host but the service's fails to resolve.
      "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
      `--log-net-log=${join(profile, "net-log.json")}`,
      // Lets the page's scripts and fetches finish before the DOM is printed.
      "--virtual-time-budget=20000",
      "--dump-dom", url,
    ], { stdout: "pipe", stderr: "ignore" });
    const timer = setTimeout(() => proc.kill("SIGKILL"), BROWSER_TIMEOUT_MS);
    const [dom, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    clearTimeout(timer);
    if (code !== 0) throw new Error(`chromium exited with ${code}`);
    return { dom, pageRequests: pageRequests(readFileSync(join(profile, "net-log.json"), "utf8"), new URL(url).origin) };
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
}

/** URLs of requests the page started: the top document, and those whose initiator is the page's origin. */
function pageRequests(netLog: string, origin: string): string[] {
  const log = JSON.parse(netLog) as { constants: { logEventTypes: Record<string, number> }; events: Array<{ type: number; params?: Record<string, string> }> };
  const start = log.constants.logEventTypes.URL_REQUEST_START_JOB;
  return log.events
    .filter((e) => e.type === start && e.params?.url && (e.params.initiator === origin || e.params.request_type === "main frame"))
    .map((e) => e.params!.url!);
}

describe.skipIf(skipWithout(chromium, "the API docs UI in headless Chromium"))("the API docs UI, offline, in headless Chromium", () => {
  let installed: InstalledBinary;
  let served: Served;
  let rendered: Rendered;

  beforeAll(async () => {
    requireTool(chromium);
    installed = await installBinary("x64");
    served = await startServe({ dataDir: join(installed.dir, "data"), program: installed.program });
    // The fragment opens one operation, so its request fields are rendered too.
    rendered = await render(`${served.url}/docs/api#tag/keys/POST/v2/keys.verifyKey`);
  }, BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await served?.stop();
    installed?.cleanup();
  });

  test("the page fetched its script and the OpenAPI document from tollgate, and nothing from anywhere else", () => {
    const { origin } = new URL(served.url);
    expect(rendered.pageRequests).toContain(`${origin}/docs/api/assets/scalar-api-reference.js`);
    expect(rendered.pageRequests).toContain(`${origin}/docs/api/openapi.json`);
    expect(rendered.pageRequests.filter((u) => new URL(u).origin !== origin)).toEqual([]);
  });

  test("the rendered page links nowhere but tollgate: no href to another origin", () => {
    const { origin } = new URL(served.url);
    const hrefs = [...rendered.dom.matchAll(/\shref="([^"]*)"/g)].map((m) => m[1]!.replaceAll("&amp;", "&"));
    expect(hrefs.length).toBeGreaterThan(0);
    expect(hrefs.filter((href) => new URL(href, `${origin}/docs/api`).origin !== origin)).toEqual([]);
  });

  test("the code samples name the host the document was fetched from", () => {
    const text = rendered.dom.replace(/<style[\s\S]*?<\/style>|<script[\s\S]*?<\/script>/g, "").replace(/<[^>]+>/g, "");
    expect(text).toContain(`curl ${served.url}/v2/keys.verifyKey`);
  });

  test("the UI rendered: the document's title, every tag, and the operations", () => {
    const text = rendered.dom.replace(/<style[\s\S]*?<\/style>|<script[\s\S]*?<\/script>/g, "").replace(/<[^>]+>/g, " ");
    for (const expected of ["tollgate", "liveness", "apis", "keys", "identities", "ratelimit", "ratelimits", "permissions", "audit", "analytics", "/v2/keys.verifyKey", "Verify a key"]) {
      expect({ expected, found: text.includes(expected) }).toEqual({ expected, found: true });
    }
  });

  test("the opened operation shows its request fields with their descriptions", () => {
    // From the route's schema: keys.verifyKey's `key` and `permissions` fields.
    expect(rendered.dom).toContain("The end-user key");
    expect(rendered.dom).toContain("Permission query: names, AND, OR, parentheses");
  });
});
