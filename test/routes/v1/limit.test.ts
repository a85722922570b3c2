/**
 * POST /v1/ratelimits.limit under TOLLGATE_V1_PATHS=on: upstream v1's request and bare answer
 * over the one rate-limit service, with a root key holding the limit permission. Tests named as
 * the upstream v1 route test they follow (apps/api/src/routes/v1_ratelimits_limit*.test.ts).
 */
import { describe, expect, test } from "bun:test";
import { routeContract } from "../../support/route-contract.ts";

const PATH = "/v1/ratelimits.limit";
const h = routeContract(PATH, { env: { TOLLGATE_V1_PATHS: "on" } });

describe("decisions", () => {
  test("{limit, remaining, reset, success}, bare; denied past the limit", async () => {
    const body = { namespace: "v1-ns", identifier: "user_1", limit: 2, duration: 60_000 };
    const first = await h.post(PATH, body);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ limit: 2, remaining: 1, reset: expect.any(Number), success: true });
    expect(first.body.reset).toBeGreaterThan(h.clock.now());
    expect((await h.post(PATH, body)).body).toMatchObject({ remaining: 0, success: true });
    expect((await h.post(PATH, body)).body).toMatchObject({ limit: 2, remaining: 0, success: false });
  });

  test("setting cost=0 returns the limit without modifying", async () => {
    const request = { identifier: "user_cost0", namespace: "v1-cost0", limit: 10, duration: 10_000, async: false };
    for (let i = 0; i < 5; i++) {
      const res = await h.post(PATH, { ...request, cost: 0 });
      expect(res.status).toBe(200);
      expect(res.body.remaining).toBe(request.limit);
    }
  });

  test("`cost` is taken from the limit; `namespace` defaults to \"default\"; `async`, `meta` and `resources` are accepted", async () => {
    const res = await h.post(PATH, {
      identifier: "user_default_ns", limit: 10, duration: 60_000, cost: 4, async: true,
      meta: { plan: "pro" }, resources: [{ type: "project", id: "p_1", name: "one" }],
    });
    expect(res.body).toEqual({ limit: 10, remaining: 6, reset: expect.any(Number), success: true });
    // The same window through v2, in the namespace v1 chose.
    const v2 = await h.post("/v2/ratelimits.limit", { namespace: "default", identifier: "user_default_ns", limit: 10, duration: 60_000, cost: 0 });
    expect(v2.body.data.remaining).toBe(6);
  });
});

describe("root key", () => {
  test("without a root key: 401 UNAUTHORIZED in v1's body", async () => {
    const res = await h.post(PATH, { identifier: "x", limit: 1, duration: 1000 }, { key: null });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: { code: "UNAUTHORIZED", docs: expect.any(String), message: expect.any(String), requestId: res.headers.get("x-request-id") } });
  });

  test("a malformed Authorization header: 401 UNAUTHORIZED, as upstream's v1 (v2 answers 400)", async () => {
    const res = await h.post(PATH, { identifier: "x", limit: 1, duration: 1000 }, { key: null, headers: { authorization: "Basic abc" } });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("UNAUTHORIZED");
  });

  test("an unknown root key: 401 UNAUTHORIZED", async () => {
    const res = await h.post(PATH, { identifier: "x", limit: 1, duration: 1000 }, { key: "tg_not_a_root_key_at_all" });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("UNAUTHORIZED");
  });

  test("a root key without ratelimit.*.limit: 403 INSUFFICIENT_PERMISSIONS naming the permission", async () => {
    const key = await h.rootKeyWith(["api.*.verify_key", "ratelimit.*.create_namespace"]);
    const res = await h.post(PATH, { namespace: "v1-denied", identifier: "x", limit: 1, duration: 1000 }, { key });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: "INSUFFICIENT_PERMISSIONS", message: expect.stringContaining("ratelimit.*.limit") });
  });

  test("a root key with only ratelimit.*.limit may limit in an existing namespace", async () => {
    await h.post(PATH, { namespace: "v1-existing", identifier: "x", limit: 5, duration: 1000 });
    const key = await h.rootKeyWith(["ratelimit.*.limit"]);
    expect((await h.post(PATH, { namespace: "v1-existing", identifier: "x", limit: 5, duration: 1000 }, { key })).body).toMatchObject({ success: true, remaining: 3 });
  });
});

describe("bad requests", () => {
  test("a body without `identifier`: 400 BAD_REQUEST naming it", async () => {
    const res = await h.post(PATH, { limit: 1, duration: 1000 });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "BAD_REQUEST", message: expect.stringContaining("identifier") });
  });

  test("a duration below v2's bound is the same 400", async () => {
    const res = await h.post(PATH, { identifier: "x", limit: 1, duration: 10 });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("BAD_REQUEST");
  });
});
