/**
 * The console as served by the app: index.html at `/` and at every /console path (deep links),
 * hashed assets cached for a year, the security headers on each, the first load within 150 KB
 * gzipped, the other GET paths unchanged, and no CORS opening anywhere on the API.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../support/harness.ts";

const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";
const FIRST_LOAD_LIMIT_BYTES = 150 * 1024;

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.stop();
});

const get = (path: string, init?: RequestInit) => fetch(h.url + path, init);
const assetPaths = (html: string) => [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]!);

function expectConsoleHeaders(res: Response): void {
  expect(res.headers.get("content-security-policy")).toBe(CSP);
  expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  expect(res.headers.get("referrer-policy")).toBe("no-referrer");
}

describe("index.html", () => {
  for (const path of ["/", "/console", "/console/", "/console/apis/api_123/keys/key_456"]) {
    test(`200: GET ${path} answers the console's index.html with its headers`, async () => {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(res.headers.get("cache-control")).toBe("no-cache");
      expectConsoleHeaders(res);
      const html = await res.text();
      expect(html).toContain('<div id="root"></div>');
      // No inline script or style: the CSP would refuse them.
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=/);
    });
  }
});

describe("assets", () => {
  test("200: each asset index.html names, by a hashed name, cached for a year, with the console's headers", async () => {
    const paths = assetPaths(await (await get("/console")).text());
    expect(paths.some((p) => p.endsWith(".js"))).toBe(true);
    expect(paths.some((p) => p.endsWith(".css"))).toBe(true);
    for (const path of paths) {
      expect(path).toMatch(/-[a-z0-9]{8}\.(?:js|css)$/);
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(res.headers.get("content-type")).toStartWith(path.endsWith(".js") ? "text/javascript" : "text/css");
      expectConsoleHeaders(res);
    }
  });

  test("the first load (index.html and what it loads) is at most 150 KB gzipped", async () => {
    const html = await (await get("/console")).text();
    let gzippedBytes = Bun.gzipSync(html).length;
    for (const path of assetPaths(html)) gzippedBytes += Bun.gzipSync(new Uint8Array(await (await get(path)).arrayBuffer())).length;
    console.log(`console first load: ${(gzippedBytes / 1024).toFixed(1)} KiB gzipped`);
    expect(gzippedBytes).toBeLessThanOrEqual(FIRST_LOAD_LIMIT_BYTES);
  });

  test("404: an asset that does not exist, and index.html under the assets path", async () => {
    for (const path of ["/console/assets/nope-12345678.js", "/console/assets/index.html"]) {
      const res = await get(path);
      expect(res.status).toBe(404);
      expectConsoleHeaders(res);
    }
  });
});

describe("the rest of the service is unchanged", () => {
  test("liveness and metrics answer as before, without the console's CSP; the docs and the OpenAPI document with its protective headers", async () => {
    for (const path of ["/v2/liveness", "/metrics"]) {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-security-policy")).toBeNull();
    }
    for (const path of ["/docs/api", "/docs/api/openapi.json", "/docs/api-reference/errors-v2", "/docs/api-reference/errors-v2/user/not_found/route_not_found", "/docs/api-reference/errors-v2/nope"]) {
      const res = await get(path);
      expect({ path, status: res.status }).toEqual({ path, status: path.endsWith("nope") ? 404 : 200 });
      // The console's CSP, but for the styles: the error pages' one inline style by its hash, Scalar's as it renders.
      const csp = res.headers.get("content-security-policy") ?? "";
      const withoutStyle = (policy: string) => policy.replace(/style-src [^;]*; /, "");
      expect(withoutStyle(csp)).toBe(withoutStyle(CSP));
      expect(csp).toMatch(path.startsWith("/docs/api-reference") ? /style-src 'sha256-[A-Za-z0-9+/]+=*';/ : /style-src 'self' 'unsafe-inline';/);
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    }
    expect(((await (await get("/v2/liveness")).json()) as { data: unknown }).data).toEqual({ message: "we're cooking" });
  });

  test("the console's paths are not in the OpenAPI document", async () => {
    const doc = (await (await get("/docs/api/openapi.json")).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).filter((p) => p === "/" || p.startsWith("/console"))).toEqual([]);
  });

  test("no CORS: neither a preflight nor a cross-origin request gets an Access-Control header", async () => {
    const origin = { origin: "https://elsewhere.example" };
    const preflight = await get("/v2/keys.verifyKey", { method: "OPTIONS", headers: { ...origin, "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" } });
    const post = await get("/v2/apis.getApi", { method: "POST", headers: { ...origin, authorization: `Bearer ${h.rootKey}`, "content-type": "application/json" }, body: "{}" });
    const page = await get("/console", { headers: origin });
    for (const res of [preflight, post, page]) {
      expect([...res.headers.keys()].filter((k) => k.startsWith("access-control-"))).toEqual([]);
    }
  });
});
