/**
 * Workspace quotas are exact under concurrency in the cluster mode: 16 creates at once against a
 * quota with room for 5 leave exactly 5, through a node's API (its SERIALIZABLE transactions) and
 * through the record stores at READ COMMITTED, where only the usage row's lock keeps the count
 * exact (the cluster's isolation level may change; the quota must not depend on it).
 */
import { describe, expect, test } from "bun:test";
import { newId } from "../../src/lib/ids.ts";
import { withinQuotas, DEFAULT_QUOTAS } from "../../src/services/quotas/index.ts";
import { pgDatabase } from "../../src/storage/pg/db.ts";
import { PgRbacStore } from "../../src/storage/pg/records/rbac.ts";
import { PgUsageStore } from "../../src/storage/pg/records/usage.ts";
import type { Records } from "../../src/storage/records/index.ts";
import { runAsync } from "../../src/storage/work.ts";
import { startHarness, type ApiResponse } from "../support/harness.ts";
import { clusterServers } from "../support/cluster-backend.ts";
import { missing, skipWithout } from "../support/tools.ts";
import { newWorkspace } from "../routes/quotas/support.ts";
import { postgresForFile } from "./pg-database.ts";

const ROOM = 5;
const CALLERS = 16;

/**
 * ROOM answers 200 and the others 429; except that a node's SERIALIZABLE transactions, all of a
 * workspace's writes racing on its rows, may still lose a race MAX_ATTEMPTS times and answer 500
 * (the cluster's retry limit, not the quota's): never a 200 past the room.
 */
function expectRoomTaken(answers: ApiResponse[]): void {
  const statuses = answers.map((r) => r.status);
  expect(statuses.filter((s) => s === 200)).toHaveLength(ROOM);
  expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(CALLERS - ROOM - 2);
  for (const r of answers) {
    if (r.status === 429) expect(r.body.error.detail).toStartWith("Workspace quota exceeded");
    else if (r.status !== 200) expect(r.status).toBe(500);
  }
}

describe.skipIf(skipWithout(missing.postgres() ?? missing.redis(), "the cluster's quotas"))("a cluster node", () => {
  test(`${CALLERS} concurrent createKey and namespace-creating checks against room for ${ROOM}: exactly ${ROOM} of each`, async () => {
    const h = await startHarness({
      servers: await clusterServers(),
      env: { TOLLGATE_WORKSPACE_MAX_KEYS: String(ROOM), TOLLGATE_WORKSPACE_MAX_NAMESPACES: String(ROOM) },
    });
    try {
      const ws = await newWorkspace(h);
      const keys = await Promise.all(Array.from({ length: CALLERS }, () => ws.post("/v2/keys.createKey", { apiId: ws.apiId })));
      expectRoomTaken(keys);
      expect(await h.records.count("keys", "workspace_id = ?", ws.id)).toBe(ROOM);
      const checks = await Promise.all(Array.from({ length: CALLERS }, (_, i) =>
        ws.post("/v2/ratelimit.limit", { namespace: `ns.${i}`, identifier: "u", limit: 10, duration: 60_000 })));
      expectRoomTaken(checks);
      expect(await h.records.count("ratelimit_namespaces", "workspace_id = ?", ws.id)).toBe(ROOM);
    } finally {
      await h.stop();
    }
  }, 60_000);
});

describe.skipIf(skipWithout(missing.postgres(), "the usage row's lock"))("the usage row's lock at READ COMMITTED", () => {
  const pg = postgresForFile();

  test(`${CALLERS} concurrent permission creations in their own transactions, room for ${ROOM}: exactly ${ROOM} commit`, async () => {
    const client = pg.client(await pg.freshDatabase(), CALLERS);
    const db = pgDatabase(client);
    const ws = "ws_quota";
    await client`INSERT INTO workspaces (id, name, created_at) VALUES (${ws}, 'quota', 0)`;
    const quotas = { ...DEFAULT_QUOTAS, permissions: ROOM };
    const create = (i: number) => db.transaction(async (tx) => {
      const records = { usage: new PgUsageStore(tx as never), rbac: new PgRbacStore(tx as never) } as unknown as Records;
      await runAsync(withinQuotas(quotas, ws, function* (r) {
        yield r.rbac.insertPermission({ id: newId("perm"), workspaceId: ws, name: `p${i}`, slug: `p${i}`, description: null, createdAt: 0 });
      })(records));
    }, { isolationLevel: "read committed" });
    const outcomes = await Promise.allSettled(Array.from({ length: CALLERS }, (_, i) => create(i)));
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(ROOM);
    for (const o of outcomes) if (o.status === "rejected") expect(String(o.reason)).toContain("Workspace quota exceeded: permissions");
    const [row] = await client`SELECT count(*)::int AS n, (SELECT permissions FROM workspace_usage WHERE workspace_id = ${ws})::int AS counted FROM permissions`;
    expect(row).toEqual({ n: ROOM, counted: ROOM });
  }, 60_000);
});
