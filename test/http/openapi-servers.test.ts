/**
 * The OpenAPI document's `servers` names the origin the document was fetched from, so the docs
 * UI's samples read `curl http://host:port/v2/…`: the Host header, and a proxy's X-Forwarded-Host
 * and X-Forwarded-Proto only when the proxy is trusted (TOLLGATE_TRUSTED_PROXIES).
 */
import { afterEach, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../support/harness.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

async function servers(headers: Record<string, string>): Promise<unknown> {
  const res = await fetch(`${h!.url}/docs/api/openapi.json`, { headers });
  expect(res.status).toBe(200);
  return ((await res.json()) as { servers?: unknown }).servers;
}

describe("servers", () => {
  test("is the origin of the request's Host header, whatever host it names", async () => {
    h = await startHarness();
    expect(await servers({})).toEqual([{ url: h.url, description: expect.any(String) }]);
    expect(await servers({ host: "tollgate.internal:8080" })).toEqual([{ url: "http://tollgate.internal:8080", description: expect.any(String) }]);
  });

  test("ignores X-Forwarded-Host and -Proto from a peer that is not a trusted proxy", async () => {
    h = await startHarness();
    const got = await servers({ host: "tollgate.internal:8080", "x-forwarded-host": "evil.example", "x-forwarded-proto": "https" });
    expect(got).toEqual([{ url: "http://tollgate.internal:8080", description: expect.any(String) }]);
  });

  test("follows X-Forwarded-Host and -Proto from a trusted proxy, the first hop's values, and ignores a malformed host", async () => {
    h = await startHarness({ env: { TOLLGATE_TRUSTED_PROXIES: "127.0.0.1/32,::1/128" } });
    const forwarded = { host: "10.0.0.5:3000", "x-forwarded-host": "api.example.com, proxy.local", "x-forwarded-proto": "https, http" };
    expect(await servers(forwarded)).toEqual([{ url: "https://api.example.com", description: expect.any(String) }]);
    expect(await servers({ host: "10.0.0.5:3000", "x-forwarded-host": "bad host/<script>", "x-forwarded-proto": "gopher" }))
      .toEqual([{ url: "http://10.0.0.5:3000", description: expect.any(String) }]);
  });
});
