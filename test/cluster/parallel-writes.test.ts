/**
 * Every write route with 16 concurrent writers in one workspace, spread over three cluster nodes in
 * this process on one PostgreSQL and one Redis: no answer in the 5xx range, and the records
 * afterwards what one writer at a time would have left (every created key verifiable on every
 * node, a balance equal to the sum of the answered increments, a replaced set equal to one
 * writer's set and never a mix, one 200 and then 404s for deletes of one record, one 200 and 409s
 * for creates of one name).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { clusterServers, type ClusterServers } from "../support/cluster-backend.ts";
import { startHarness, type ApiResponse, type Harness } from "../support/harness.ts";
import { SERVER_START_TIMEOUT_MS } from "../support/servers.ts";
import { missing, skipWithout } from "../support/tools.ts";

const WRITERS = 16;
const TEST_TIMEOUT_MS = 60_000;
/** How long a change may take to reach another node's verification (docs/cluster.md), with room for a loaded machine. */
const CHANGE_BOUND_MS = 3000;

describe.skipIf(skipWithout(missing.postgres() ?? missing.redis(), "parallel writes across three cluster nodes"))("16 concurrent writers over three nodes", () => {
  let servers: ClusterServers;
  const nodes: Harness[] = [];
  let apiId = "";

  beforeAll(async () => {
    servers = await clusterServers();
    const first = await startHarness({ servers });
    nodes.push(first);
    nodes.push(...await Promise.all([1, 2].map(() => startHarness({ env: { ...servers.env, TOLLGATE_ROOT_KEY: first.rootKey } }))));
    apiId = (await call(0, "/v2/apis.createApi", { name: "parallel" })).apiId;
  }, SERVER_START_TIMEOUT_MS + 60_000);

  afterAll(async () => {
    // The first node stops the servers: it goes last.
    for (const node of nodes.slice(1)) await node.stop();
    await nodes[0]?.stop();
  });

  /** Writer `i`'s node: writers go round the three. */
  const post = (i: number, path: string, body: unknown) => {
    const node = nodes[i % nodes.length]!;
    return node.post(path, body, { key: nodes[0]!.rootKey });
  };
  async function call(i: number, path: string, body: unknown): Promise<any> {
    const res = await post(i, path, body);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data;
  }

  /** Runs `write(i)` for 16 writers at once; fails on any 5xx, naming it; answers the responses by writer. */
  async function concurrently(write: (i: number) => Promise<ApiResponse>): Promise<ApiResponse[]> {
    const answers = await Promise.all(Array.from({ length: WRITERS }, (_, i) => write(i)));
    const failed = answers.map((res, i) => ({ i, status: res.status, error: res.body?.error })).filter((a) => a.status >= 500);
    expect(failed).toEqual([]);
    return answers;
  }
  const statuses = (answers: ApiResponse[]) => answers.map((a) => a.status).sort((a, b) => a - b);
  /** One 200 per target and `status` for every other writer. */
  const oneWinnerPer = (targets: number, status: number) => [...Array(targets).fill(200), ...Array(WRITERS - targets).fill(status)].sort((a, b) => a - b);

  const newKey = async (extra: Record<string, unknown> = {}) => call(0, "/v2/keys.createKey", { apiId, ...extra }) as Promise<{ keyId: string; key: string }>;
  const getKey = (i: number, keyId: string) => call(i, "/v2/keys.getKey", { keyId });

  /** Polls `holds` on every node until it does; fails past the bound. */
  async function onEveryNode(what: string, holds: (i: number) => Promise<boolean>): Promise<void> {
    const deadline = performance.now() + CHANGE_BOUND_MS;
    for (let i = 0; i < nodes.length; i++) {
      while (!(await holds(i))) {
        if (performance.now() > deadline) throw new Error(`${what} on node ${i}: not within ${CHANGE_BOUND_MS} ms`);
        await Bun.sleep(10);
      }
    }
  }

  test("keys.createKey, sharing new permission slugs and one new identity: every key verifies on every node, with its permissions", async () => {
    const answers = await concurrently((i) => post(i, "/v2/keys.createKey", {
      apiId, name: `k${i}`, externalId: "shared-identity", permissions: [`shared.p${i % 4}`, "shared.all"],
    }));
    expect(statuses(answers)).toEqual(Array(WRITERS).fill(200));
    const keys = answers.map((a) => a.body.data as { keyId: string; key: string });
    const identities = await Promise.all(keys.map(async (k) => (await getKey(0, k.keyId)).identity?.id as string));
    expect(new Set(identities).size).toBe(1);
    await onEveryNode("every created key verifies", async (node) => {
      const results = await Promise.all(keys.map((k, i) => call(node, "/v2/keys.verifyKey", { key: k.key, permissions: `shared.p${i % 4} AND shared.all` })));
      return results.every((r) => r.valid === true);
    });
  }, TEST_TIMEOUT_MS);

  test("keys.updateCredits while verifications spend: the balance is the start plus the answered increments minus the valid spends", async () => {
    const metered = await newKey({ credits: { remaining: 1000 } });
    let spent = 0;
    const answers = await concurrently(async (i) => {
      if (i % 2 === 1) {
        const res = await post(i, "/v2/keys.verifyKey", { key: metered.key });
        if (res.status === 200 && res.body.data.valid) spent++;
        return res;
      }
      return post(i, "/v2/keys.updateCredits", { keyId: metered.keyId, operation: "increment", value: i + 1 });
    });
    const added = answers.reduce((sum, res, i) => sum + (i % 2 === 0 && res.status === 200 ? i + 1 : 0), 0);
    expect(statuses(answers.filter((_, i) => i % 2 === 0))).toEqual(Array(WRITERS / 2).fill(200));
    expect((await getKey(0, metered.keyId)).credits.remaining).toBe(1000 + added - spent);
  }, TEST_TIMEOUT_MS);

  test("keys.updateKey, setPermissions and setRoles on one key: the key ends with one writer's whole change", async () => {
    const target = await newKey();
    await concurrently((i) => post(i, "/v2/permissions.createRole", { name: `set-role-${i}` }));
    const updates = await concurrently((i) => post(i, "/v2/keys.updateKey", {
      keyId: target.keyId, name: `writer-${i}`, meta: { writer: i },
      ratelimits: [{ name: `limit-${i}`, limit: 10 + i, duration: 60_000 }, { name: "shared", limit: 100 + i, duration: 60_000 }],
    }));
    expect(statuses(updates)).toEqual(Array(WRITERS).fill(200));
    const updated = await getKey(1, target.keyId);
    const writer = updated.meta.writer as number;
    expect(updated.name).toBe(`writer-${writer}`);
    expect(updated.ratelimits.map((r: { name: string; limit: number }) => `${r.name}:${r.limit}`).sort())
      .toEqual([`limit-${writer}:${10 + writer}`, `shared:${100 + writer}`].sort());

    const sets = await concurrently((i) => post(i, "/v2/keys.setPermissions", { keyId: target.keyId, permissions: [`set.w${i}.a`, `set.w${i}.b`] }));
    expect(statuses(sets)).toEqual(Array(WRITERS).fill(200));
    const answered = sets.map((s) => JSON.stringify((s.body.data as Array<{ slug: string }>).map((p) => p.slug).sort()));
    const permissions = JSON.stringify(((await getKey(2, target.keyId)).permissions as string[]).slice().sort());
    expect(answered).toContain(permissions);

    const roles = await concurrently((i) => post(i, "/v2/keys.setRoles", { keyId: target.keyId, roles: [`set-role-${i}`, `set-role-${(i + 1) % WRITERS}`] }));
    expect(statuses(roles)).toEqual(Array(WRITERS).fill(200));
    const roleSets = roles.map((s) => JSON.stringify((s.body.data as Array<{ name: string }>).map((r) => r.name).sort()));
    expect(roleSets).toContain(JSON.stringify(((await getKey(0, target.keyId)).roles as string[]).slice().sort()));
  }, TEST_TIMEOUT_MS);

  test("keys.addPermissions, removePermissions, addRoles, removeRoles on one key: no 5xx, and the adds that no remove followed are held", async () => {
    const target = await newKey();
    await call(0, "/v2/permissions.createRole", { name: "grant-role" });
    await concurrently((i) => i % 4 === 0 ? post(i, "/v2/keys.addPermissions", { keyId: target.keyId, permissions: [`grant.w${i}`, "grant.shared"] })
      : i % 4 === 1 ? post(i, "/v2/keys.removePermissions", { keyId: target.keyId, permissions: ["grant.never"] })
      : i % 4 === 2 ? post(i, "/v2/keys.addRoles", { keyId: target.keyId, roles: ["grant-role"] })
      : post(i, "/v2/keys.removeRoles", { keyId: target.keyId, roles: ["no-such-grant-role"] }));
    const key = await getKey(0, target.keyId);
    expect(key.permissions).toEqual(expect.arrayContaining(["grant.shared", ...[0, 4, 8, 12].map((i) => `grant.w${i}`)]));
  }, TEST_TIMEOUT_MS);

  test("keys.deleteKey twice per key and keys.rerollKey: one 200 per key, 404 after; rerolled keys verify on every node", async () => {
    const doomed = await Promise.all(Array.from({ length: WRITERS / 2 }, () => newKey()));
    const deletes = await concurrently((i) => post(i, "/v2/keys.deleteKey", { keyId: doomed[i % doomed.length]!.keyId }));
    expect(statuses(deletes)).toEqual(oneWinnerPer(doomed.length, 404));
    const originals = await Promise.all(Array.from({ length: WRITERS }, () => newKey()));
    const rerolled = await concurrently((i) => post(i, "/v2/keys.rerollKey", { keyId: originals[i]!.keyId, expiration: 0 }));
    expect(statuses(rerolled)).toEqual(Array(WRITERS).fill(200));
    await onEveryNode("every rerolled key verifies", async (node) => {
      const results = await Promise.all(rerolled.map((r) => call(node, "/v2/keys.verifyKey", { key: r.body.data.key })));
      return results.every((r) => r.valid === true);
    });
  }, TEST_TIMEOUT_MS);

  test("permissions: create (two writers per name), setRolePermissions on one role, delete (two writers per record): 200 then 409 or 404", async () => {
    const creates = await concurrently((i) => post(i, "/v2/permissions.createPermission", { name: `perm-${i % 8}`, slug: `perm.${i % 8}` }));
    expect(statuses(creates)).toEqual(oneWinnerPer(8, 409));
    const roleCreates = await concurrently((i) => post(i, "/v2/permissions.createRole", { name: `role-${i % 8}`, permissions: [`role.p${i}`, "role.shared"] }));
    expect(statuses(roleCreates)).toEqual(oneWinnerPer(8, 409));

    const sets = await concurrently((i) => post(i, "/v2/permissions.setRolePermissions", { role: "role-0", permissions: [`rp.w${i}.a`, `rp.w${i}.b`] }));
    expect(statuses(sets)).toEqual(Array(WRITERS).fill(200));
    const answered = sets.map((s) => JSON.stringify((s.body.data as Array<{ slug: string }>).map((p) => p.slug).sort()));
    const role = await call(1, "/v2/permissions.getRole", { role: "role-0" });
    expect(answered).toContain(JSON.stringify((role.permissions as Array<{ slug: string }>).map((p) => p.slug).sort()));

    const permissionDeletes = await concurrently((i) => post(i, "/v2/permissions.deletePermission", { permission: `perm.${i % 8}` }));
    expect(statuses(permissionDeletes)).toEqual(oneWinnerPer(8, 404));
    const roleDeletes = await concurrently((i) => post(i, "/v2/permissions.deleteRole", { role: i % 2 === 0 ? `role-${i % 8}` : roleCreates.find((_, j) => j % 8 === i % 8 && roleCreates[j]!.status === 200)!.body.data.roleId }));
    expect(statuses(roleDeletes)).toEqual(oneWinnerPer(8, 404));
  }, TEST_TIMEOUT_MS);

  test("identities: create (two writers per externalId), update one identity, delete (two writers per identity)", async () => {
    const creates = await concurrently((i) => post(i, "/v2/identities.createIdentity", { externalId: `ident-${i % 8}` }));
    expect(statuses(creates)).toEqual(oneWinnerPer(8, 409));
    const updates = await concurrently((i) => post(i, "/v2/identities.updateIdentity", {
      identity: "ident-0", meta: { writer: i }, ratelimits: [{ name: `limit-${i}`, limit: 10 + i, duration: 60_000 }, { name: "shared", limit: 100 + i, duration: 60_000 }],
    }));
    expect(statuses(updates)).toEqual(Array(WRITERS).fill(200));
    const identity = await call(2, "/v2/identities.getIdentity", { identity: "ident-0" });
    const writer = identity.meta.writer as number;
    expect(identity.ratelimits.map((r: { name: string; limit: number }) => `${r.name}:${r.limit}`).sort())
      .toEqual([`limit-${writer}:${10 + writer}`, `shared:${100 + writer}`].sort());
    const deletes = await concurrently((i) => post(i, "/v2/identities.deleteIdentity", { identity: `ident-${i % 8}` }));
    expect(statuses(deletes)).toEqual(oneWinnerPer(8, 404));
  }, TEST_TIMEOUT_MS);

  test("rate limits: checks creating new namespaces, setOverride on one identifier, deleteOverride twice per identifier", async () => {
    await concurrently((i) => post(i, "/v2/ratelimit.limit", { namespace: `fresh-${i % 4}`, identifier: `u${i}`, limit: 100, duration: 60_000 }));
    const sets = await concurrently((i) => post(i, "/v2/ratelimit.setOverride", { namespace: "fresh-0", identifier: "hot", limit: 1 + i, duration: 60_000 }));
    expect(new Set(sets.map((s) => s.body.data.overrideId)).size).toBe(1);
    await concurrently((i) => post(i, "/v2/ratelimit.setOverride", { namespace: "fresh-1", identifier: `id-${i % 8}`, limit: 5, duration: 60_000 }));
    const deletes = await concurrently((i) => post(i, "/v2/ratelimit.deleteOverride", { namespace: "fresh-1", identifier: `id-${i % 8}` }));
    expect(statuses(deletes)).toEqual(oneWinnerPer(8, 404));
  }, TEST_TIMEOUT_MS);

  test("apis: createApi, deleteApi twice per API", async () => {
    const creates = await concurrently((i) => post(i, "/v2/apis.createApi", { name: `api-${i}` }));
    const ids = creates.map((c) => c.body.data.apiId as string);
    const deletes = await concurrently((i) => post(i, "/v2/apis.deleteApi", { apiId: ids[i % 8]! }));
    expect(statuses(deletes)).toEqual(oneWinnerPer(8, 404));
  }, TEST_TIMEOUT_MS);
});
