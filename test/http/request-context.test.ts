/** Every response names its request: `meta.requestId` (`req_…`) and the same value in `X-Request-Id`. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../support/harness.ts";

let h: Harness;
beforeAll(async () => { h = await startHarness(); });
afterAll(async () => { await h.stop(); });

describe("request id", () => {
  test("on successes, errors of every kind, and liveness; unique per request", async () => {
    const responses = [
      await h.post("/v2/apis.createApi", { name: "ids" }),
      await h.post("/v2/apis.createApi", { name: "ids" }),
      await h.post("/v2/apis.createApi", {}),
      await h.post("/v2/apis.createApi", "{"),
      await h.post("/v2/apis.createApi", { name: "ids" }, { key: null }),
      await h.post("/v2/apis.createApi", { name: "ids" }, { key: "tg_root_unknown" }),
      await h.post("/v2/apis.createApi", { name: "ids" }, { key: await h.rootKeyWith(["api.*.read_api"]) }),
      await h.post("/v2/apis.getApi", { apiId: "api_missing" }),
      await h.post("/v2/keys.verifyKey", { key: "unknown" }),
      await h.post("/v2/no.route", {}),
      await h.post("/v2/keys.verifyKey", "x".repeat(1024 * 1024 + 1)),
    ];
    const live = await fetch(`${h.url}/v2/liveness`);
    const liveBody: any = await live.json();
    const pairs = [
      ...responses.map((r) => ({ header: r.headers.get("x-request-id"), meta: r.body.meta.requestId, status: r.status })),
      { header: live.headers.get("x-request-id"), meta: liveBody.meta.requestId, status: live.status },
    ];
    expect(pairs.map((p) => p.status)).toEqual([200, 200, 400, 400, 400, 401, 403, 404, 200, 404, 413, 200]);
    for (const p of pairs) {
      expect(p.meta).toMatch(/^req_[1-9A-HJ-NP-Za-km-z]+$/);
      expect(p.header).toBe(p.meta);
    }
    expect(new Set(pairs.map((p) => p.meta)).size).toBe(pairs.length);
  });

  test("a client-sent X-Request-Id is not echoed; the service names its own", async () => {
    const res = await h.post("/v2/apis.createApi", { name: "ids" }, { headers: { "x-request-id": "req_client" } });
    expect(res.body.meta.requestId).not.toBe("req_client");
    expect(res.headers.get("x-request-id")).toBe(res.body.meta.requestId);
  });
});
