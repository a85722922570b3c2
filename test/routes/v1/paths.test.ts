/**
 * TOLLGATE_V1_PATHS: off (the default) the v1 paths are unknown paths; on, both answer with a
 * Deprecation header, and a v1 and a v2 verification of one key draw from the same credits and
 * the same limits (one implementation underneath).
 */
import { describe, expect, test } from "bun:test";
import { routeContract, testServer } from "../../support/route-contract.ts";
import { createApi, createKey } from "../../support/contract.ts";

const V1_PATHS = ["/v1/keys.verifyKey", "/v1/ratelimits.limit"];

describe("off by default", () => {
  const h = testServer();

  test("each v1 path answers 404 as any unknown path, whatever the body", async () => {
    for (const path of V1_PATHS) {
      const res = await h.post(path, { key: "x", identifier: "x", limit: 1, duration: 1000 });
      const unknown = await h.post("/v1/no.suchRoute", { key: "x" });
      expect(res.status).toBe(404);
      expect(res.body.error.type).toBe(unknown.body.error.type);
      expect(res.headers.get("deprecation")).toBeNull();
    }
  });
});

describe("on", () => {
  const h = routeContract("/v1/keys.verifyKey", { api: "v1-paths", env: { TOLLGATE_V1_PATHS: "on" } });

  test("a Deprecation header on every v1 answer, success or error, and none on v2's", async () => {
    const k = await createKey(h, { apiId: h.apiId });
    const answers = [
      await h.post("/v1/keys.verifyKey", { key: k.key }, { key: null }),
      await h.post("/v1/keys.verifyKey", { key: "unknown" }, { key: null }),
      await h.post("/v1/keys.verifyKey", {}, { key: null }),
      await h.post("/v1/ratelimits.limit", { identifier: "x", limit: 1, duration: 1000 }),
      await h.post("/v1/ratelimits.limit", { identifier: "x", limit: 1, duration: 1000 }, { key: null }),
    ];
    expect(answers.map((r) => r.status)).toEqual([200, 200, 400, 200, 401]);
    for (const res of answers) expect(res.headers.get("deprecation")).toMatch(/^@\d+$/);
    expect((await h.post("/v2/keys.verifyKey", { key: k.key })).headers.get("deprecation")).toBeNull();
  });

  test("GET of a v1 path is 405 naming POST, as v2's paths", async () => {
    const res = await fetch(`${h.url}/v1/keys.verifyKey`);
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
  });

  test("v1 and v2 verifications of one metered key draw from the same credits", async () => {
    const k = await createKey(h, { apiId: h.apiId, credits: { remaining: 4 } });
    expect((await h.post("/v1/keys.verifyKey", { key: k.key, remaining: { cost: 2 } }, { key: null })).body.remaining).toBe(2);
    expect((await h.post("/v2/keys.verifyKey", { key: k.key })).body.data.credits).toBe(1);
    expect((await h.post("/v1/keys.verifyKey", { key: k.key }, { key: null })).body).toMatchObject({ code: "VALID", remaining: 0 });
    expect((await h.post("/v2/keys.verifyKey", { key: k.key })).body.data).toMatchObject({ code: "USAGE_EXCEEDED", credits: 0 });
  });

  test("v1 and v2 verifications of one key draw from the same rate limits", async () => {
    const k = await createKey(h, { apiId: h.apiId, ratelimits: [{ name: "requests", limit: 3, duration: 60_000, autoApply: true }] });
    expect((await h.post("/v1/keys.verifyKey", { key: k.key }, { key: null })).body.ratelimit).toMatchObject({ limit: 3, remaining: 2 });
    expect((await h.post("/v2/keys.verifyKey", { key: k.key })).body.data.ratelimits[0]).toMatchObject({ remaining: 1 });
    expect((await h.post("/v1/keys.verifyKey", { key: k.key }, { key: null })).body.code).toBe("VALID");
    expect((await h.post("/v2/keys.verifyKey", { key: k.key })).body.data.code).toBe("RATE_LIMITED");
    expect((await h.post("/v1/keys.verifyKey", { key: k.key }, { key: null })).body.code).toBe("RATE_LIMITED");
  });

  test("v1 and v2 rate-limit checks of one identifier share its window", async () => {
    const body = { namespace: "v1-shared", identifier: "user_shared", limit: 2, duration: 60_000 };
    expect((await h.post("/v1/ratelimits.limit", body)).body).toMatchObject({ success: true, remaining: 1 });
    expect((await h.post("/v2/ratelimits.limit", body)).body.data).toMatchObject({ success: true, remaining: 0 });
    expect((await h.post("/v1/ratelimits.limit", body)).body).toMatchObject({ success: false });
  });

  test("v1 verifications count in /metrics as v2's do", async () => {
    const api = await createApi(h, "v1-metrics");
    const k = await createKey(h, { apiId: api });
    const before = await (await fetch(`${h.url}/metrics`)).text();
    const count = (text: string) => Number(/tollgate_verifications_total\{code="VALID"\} (\d+)/.exec(text)?.[1] ?? 0);
    await h.post("/v1/keys.verifyKey", { key: k.key }, { key: null });
    expect(count(await (await fetch(`${h.url}/metrics`)).text())).toBe(count(before) + 1);
  });

  test("a FORBIDDEN (another apiId) counts for the key's API as every recorded verification does", async () => {
    const api = await createApi(h, "v1-metrics-forbidden");
    const k = await createKey(h, { apiId: api });
    expect((await h.post("/v1/keys.verifyKey", { key: k.key, apiId: h.apiId }, { key: null })).body.code).toBe("FORBIDDEN");
    const text = await (await fetch(`${h.url}/metrics`)).text();
    expect(text).toContain(`tollgate_verifications_by_api_total{api_id="${api}",code="FORBIDDEN"} 1`);
    expect(text).toMatch(/tollgate_verifications_total\{code="FORBIDDEN"\} [1-9]/);
  });
});
