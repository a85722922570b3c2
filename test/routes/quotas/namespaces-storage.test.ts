/**
 * TOLLGATE_WORKSPACE_MAX_NAMESPACES (namespaces a rate-limit check creates) and
 * TOLLGATE_WORKSPACE_STORAGE_MB (bytes of records: meta grown by an update counts too).
 * A check that would create a namespace past the quota answers 429 in the error envelope, as any
 * other creation does; checks of existing namespaces go on.
 */
import { describe, expect, test } from "bun:test";
import { testServer } from "../../support/route-contract.ts";
import { countIn, expectQuotaExceeded, expectUsageMatchesRecords, newWorkspace, SMALL_QUOTAS, usageOf } from "./support.ts";

const h = testServer({ env: SMALL_QUOTAS });

const check = (namespace: string, identifier = "user") => ({ namespace, identifier, limit: 10, duration: 60_000 });
const NAMESPACES = ["TOLLGATE_WORKSPACE_MAX_NAMESPACES", "3"] as const;

describe("namespaces (TOLLGATE_WORKSPACE_MAX_NAMESPACES=3)", () => {
  test("a check of a fourth namespace is 429 and creates nothing; checks of the three go on", async () => {
    const ws = await newWorkspace(h);
    for (const ns of ["ns.a", "ns.b", "ns.c"]) expect((await ws.post("/v2/ratelimit.limit", check(ns))).body.data.success).toBe(true);
    const auditBefore = await countIn(h, "audit_logs", ws.id);
    expectQuotaExceeded(await ws.post("/v2/ratelimit.limit", check("ns.d")), "namespaces", ...NAMESPACES);
    expectQuotaExceeded(await ws.post("/v2/ratelimits.limit", check("ns.e")), "namespaces", ...NAMESPACES);
    expect(await countIn(h, "ratelimit_namespaces", ws.id)).toBe(3);
    expect(await countIn(h, "audit_logs", ws.id)).toBe(auditBefore);
    const again = await ws.post("/v2/ratelimit.limit", check("ns.a"));
    expect(again.body.data).toMatchObject({ success: true, remaining: 8 });
    expect((await ws.post("/v2/ratelimits.limit", check("ns.b", "other"))).body.data.success).toBe(true);
    expect((await ws.post("/v2/ratelimit.listNamespaces", {})).body.data).toHaveLength(3);
    expect((await ws.post("/v2/ratelimit.setOverride", { namespace: "ns.a", identifier: "vip", limit: 100, duration: 60_000 })).status).toBe(200);
    await expectUsageMatchesRecords(h, ws.id);
  });

  test("a multiLimit with two new namespaces and room for one creates neither and charges nothing", async () => {
    const ws = await newWorkspace(h);
    for (const ns of ["ns.a", "ns.b"]) expect((await ws.post("/v2/ratelimit.limit", check(ns))).status).toBe(200);
    const res = await ws.post("/v2/ratelimit.multiLimit", [check("ns.a"), check("ns.x"), check("ns.y")]);
    expectQuotaExceeded(res, "namespaces", ...NAMESPACES);
    expect(await countIn(h, "ratelimit_namespaces", ws.id)).toBe(2);
    expect((await ws.post("/v2/ratelimit.limit", check("ns.a"))).body.data.remaining).toBe(8);
    expect((await ws.post("/v2/ratelimit.multiLimit", [check("ns.a"), check("ns.x")])).status).toBe(200);
  });

  test("a key's verification with its own rate limits needs no namespace and works at a full quota", async () => {
    const ws = await newWorkspace(h);
    for (const ns of ["ns.a", "ns.b", "ns.c"]) expect((await ws.post("/v2/ratelimit.limit", check(ns))).status).toBe(200);
    const { key } = (await ws.post("/v2/keys.createKey", {
      apiId: ws.apiId, ratelimits: [{ name: "requests", limit: 2, duration: 60_000, autoApply: true }],
    })).body.data;
    expect((await ws.post("/v2/keys.verifyKey", { key })).body.data).toMatchObject({ valid: true, code: "VALID" });
  });
});

describe("storage (TOLLGATE_WORKSPACE_STORAGE_MB=1)", () => {
  const meta = (kib: number) => ({ blob: "x".repeat(kib * 1024) });

  test("records past 1 MiB are 429 naming the quota; a bigger meta on update too; shrinking and deleting always work", async () => {
    const ws = await newWorkspace(h);
    const first = await ws.post("/v2/identities.createIdentity", { externalId: "big", meta: meta(600) });
    expect(first.status).toBe(200);
    const usage = await usageOf(h, ws.id);
    expect(usage.bytes).toBeGreaterThan(600 * 1024);
    expect(usage.bytes).toBeLessThan(601 * 1024);
    const second = await ws.post("/v2/keys.createKey", { apiId: ws.apiId, meta: meta(500) });
    expectQuotaExceeded(second, "storage", "TOLLGATE_WORKSPACE_STORAGE_MB", "1 MiB");
    expect(await countIn(h, "keys", ws.id)).toBe(0);
    const { keyId, key } = (await ws.post("/v2/keys.createKey", { apiId: ws.apiId, meta: meta(100) })).body.data;
    expectQuotaExceeded(await ws.post("/v2/keys.updateKey", { keyId, meta: meta(500) }), "storage", "TOLLGATE_WORKSPACE_STORAGE_MB", "1 MiB");
    expectQuotaExceeded(await ws.post("/v2/identities.updateIdentity", { identity: "big", meta: meta(950) }), "storage", "TOLLGATE_WORKSPACE_STORAGE_MB", "1 MiB");
    expect((await ws.post("/v2/keys.getKey", { keyId })).body.data.meta.blob).toHaveLength(100 * 1024);
    expect((await ws.post("/v2/keys.verifyKey", { key })).body.data.valid).toBe(true);
    expect((await ws.post("/v2/keys.updateKey", { keyId, meta: meta(50) })).status).toBe(200);
    expect((await ws.post("/v2/identities.deleteIdentity", { identity: "big" })).status).toBe(200);
    expect((await ws.post("/v2/keys.updateKey", { keyId, meta: meta(800) })).status).toBe(200);
    await expectUsageMatchesRecords(h, ws.id);
  });
});
