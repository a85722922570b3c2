/**
 * TOLLGATE_WORKSPACE_MAX_KEYS and _MAX_IDENTITIES on every route that creates them: 429 naming the
 * quota, nothing of the request applied, reads, verifications and deletes at a full quota, and
 * room again once a record is deleted.
 */
import { describe, expect, test } from "bun:test";
import { testServer } from "../../support/route-contract.ts";
import { countIn, expectQuotaExceeded, expectUsageMatchesRecords, newWorkspace, SMALL_QUOTAS, usageOf, type Workspace } from "./support.ts";

const h = testServer({ env: SMALL_QUOTAS });

async function createKeys(ws: Workspace, n: number, extra: Record<string, unknown> = {}): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await ws.post("/v2/keys.createKey", { apiId: ws.apiId, ...extra });
    expect(res.status).toBe(200);
    ids.push(res.body.data.keyId);
  }
  return ids;
}

describe("keys (TOLLGATE_WORKSPACE_MAX_KEYS=3)", () => {
  test("the fourth key is 429 naming the quota; nothing is created, not even its identity or permissions", async () => {
    const ws = await newWorkspace(h);
    await createKeys(ws, 3);
    const res = await ws.post("/v2/keys.createKey", { apiId: ws.apiId, externalId: "fresh_owner", permissions: ["docs.read"] });
    expectQuotaExceeded(res, "keys", "TOLLGATE_WORKSPACE_MAX_KEYS", "3");
    expect(res.body.error.detail).toContain("holds 3");
    expect(await countIn(h, "keys", ws.id, true)).toBe(3);
    expect(await countIn(h, "identities", ws.id)).toBe(0);
    expect(await countIn(h, "permissions", ws.id)).toBe(0);
    await expectUsageMatchesRecords(h, ws.id);
  });

  test("at a full quota keys read, verify, update and delete; a delete makes room for one more", async () => {
    const ws = await newWorkspace(h);
    const created = await ws.post("/v2/keys.createKey", { apiId: ws.apiId, meta: { plan: "pro" } });
    const { keyId, key } = created.body.data;
    await createKeys(ws, 2);
    expect((await ws.post("/v2/keys.verifyKey", { key })).body.data).toMatchObject({ valid: true, code: "VALID" });
    expect((await ws.post("/v2/keys.getKey", { keyId })).status).toBe(200);
    expect((await ws.post("/v2/apis.listKeys", { apiId: ws.apiId })).body.data).toHaveLength(3);
    expect((await ws.post("/v2/keys.updateKey", { keyId, meta: { plan: "free" }, enabled: false })).status).toBe(200);
    expect((await ws.post("/v2/keys.createKey", { apiId: ws.apiId })).status).toBe(429);
    expect((await ws.post("/v2/keys.deleteKey", { keyId })).status).toBe(200);
    expect((await ws.post("/v2/keys.createKey", { apiId: ws.apiId })).status).toBe(200);
    expect((await ws.post("/v2/keys.createKey", { apiId: ws.apiId })).status).toBe(429);
    await expectUsageMatchesRecords(h, ws.id);
  });

  test("a permanent delete frees room as a soft one does", async () => {
    const ws = await newWorkspace(h);
    const [first] = await createKeys(ws, 3);
    expect((await ws.post("/v2/keys.deleteKey", { keyId: first, permanent: true })).status).toBe(200);
    expect((await ws.post("/v2/keys.createKey", { apiId: ws.apiId })).status).toBe(200);
    await expectUsageMatchesRecords(h, ws.id);
  });

  test("deleting an API deletes its keys with it: they stop counting", async () => {
    const ws = await newWorkspace(h);
    const { key } = (await ws.post("/v2/keys.createKey", { apiId: ws.apiId, permissions: ["p.read"], roles: [] })).body.data;
    await createKeys(ws, 2);
    expect((await ws.post("/v2/apis.deleteApi", { apiId: ws.apiId })).status).toBe(200);
    expect((await ws.post("/v2/keys.verifyKey", { key })).body.data.code).toBe("NOT_FOUND");
    const other = (await ws.post("/v2/apis.createApi", { name: "second-api" })).body.data.apiId;
    for (let i = 0; i < 3; i++) expect((await ws.post("/v2/keys.createKey", { apiId: other })).status).toBe(200);
    await expectUsageMatchesRecords(h, ws.id);
  });

  test("a soft-deleted key's links and limits stop counting: the bytes return to what they were", async () => {
    const ws = await newWorkspace(h);
    const before = (await usageOf(h, ws.id)).bytes;
    const { keyId } = (await ws.post("/v2/keys.createKey", {
      apiId: ws.apiId, permissions: ["p.one", "p.two"], ratelimits: [{ name: "requests", limit: 5, duration: 60_000 }],
    })).body.data;
    expect((await ws.post("/v2/keys.deleteKey", { keyId })).status).toBe(200);
    // What is left is the two permissions made on the fly, which outlive the key.
    const made = await h.records.rows<{ name: string; slug: string; description: string | null }>(
      "SELECT name, slug, description FROM permissions WHERE workspace_id = ?", ws.id);
    const text = (p: { name: string; slug: string; description: string | null }) => Buffer.byteLength(p.name + p.slug + (p.description ?? ""));
    expect((await usageOf(h, ws.id)).bytes - before).toBe(made.reduce((sum, p) => sum + 128 + text(p), 0));
    expect(made).toHaveLength(2);
  });

  test("rerollKey at a full quota is 429 and leaves the old key as it was", async () => {
    const ws = await newWorkspace(h);
    const [keyId] = await createKeys(ws, 3);
    const res = await ws.post("/v2/keys.rerollKey", { keyId, expiration: 0 });
    expectQuotaExceeded(res, "keys", "TOLLGATE_WORKSPACE_MAX_KEYS", "3");
    expect(await countIn(h, "keys", ws.id, true)).toBe(3);
    expect((await ws.post("/v2/keys.getKey", { keyId })).body.data.expires).toBeUndefined();
  });

  test("another workspace is not held by this one's full quota", async () => {
    const full = await newWorkspace(h);
    await createKeys(full, 3);
    const other = await newWorkspace(h);
    await createKeys(other, 3);
  });
});

describe("identities (TOLLGATE_WORKSPACE_MAX_IDENTITIES=3)", () => {
  test("identities.createIdentity past the quota is 429; a delete makes room", async () => {
    const ws = await newWorkspace(h);
    const ids: string[] = [];
    for (const externalId of ["a", "b", "c"]) ids.push((await ws.post("/v2/identities.createIdentity", { externalId })).body.data.identityId);
    const res = await ws.post("/v2/identities.createIdentity", { externalId: "d", ratelimits: [{ name: "requests", limit: 1, duration: 60_000 }] });
    expectQuotaExceeded(res, "identities", "TOLLGATE_WORKSPACE_MAX_IDENTITIES", "3");
    expect(await countIn(h, "identities", ws.id, true)).toBe(3);
    expect(await countIn(h, "ratelimit_configs", ws.id)).toBe(0);
    expect((await ws.post("/v2/identities.getIdentity", { identity: "a" })).status).toBe(200);
    expect((await ws.post("/v2/identities.listIdentities", {})).body.data).toHaveLength(3);
    expect((await ws.post("/v2/identities.deleteIdentity", { identity: ids[0] })).status).toBe(200);
    expect((await ws.post("/v2/identities.createIdentity", { externalId: "d" })).status).toBe(200);
    await expectUsageMatchesRecords(h, ws.id);
  });

  test("createKey and updateKey with a new externalId at a full quota are 429 and change nothing; an existing externalId still works", async () => {
    const ws = await newWorkspace(h);
    for (const externalId of ["a", "b", "c"]) expect((await ws.post("/v2/identities.createIdentity", { externalId })).status).toBe(200);
    expectQuotaExceeded(await ws.post("/v2/keys.createKey", { apiId: ws.apiId, externalId: "new_one" }), "identities", "TOLLGATE_WORKSPACE_MAX_IDENTITIES", "3");
    expect(await countIn(h, "keys", ws.id)).toBe(0);
    const [keyId] = await createKeys(ws, 1, { externalId: "a" });
    expectQuotaExceeded(await ws.post("/v2/keys.updateKey", { keyId, externalId: "new_one", name: "renamed" }), "identities", "TOLLGATE_WORKSPACE_MAX_IDENTITIES", "3");
    const key = (await ws.post("/v2/keys.getKey", { keyId })).body.data;
    expect(key.name).toBeUndefined();
    expect(key.identity.externalId).toBe("a");
    expect((await ws.post("/v2/keys.updateKey", { keyId, externalId: "b" })).status).toBe(200);
    await expectUsageMatchesRecords(h, ws.id);
  });
});
