/**
 * An audit entry is written in the same transaction as its change. With the audit log made
 * unwritable, every mutating route answers 500 and stores nothing at all; once it is writable
 * again, the same call succeeds and writes its entries (so no cache remembered the change that was
 * rolled back). The same holds for the changes the CLI makes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../support/harness.ts";
import { createApi } from "../support/contract.ts";
import { auditMutations, type MutationWorld } from "./audit-mutations.ts";

/**
 * Written by timers or the event writer, not by the changes under test; and the workspace's data
 * key, which the vault makes on first use, in its own transaction, and reuses from then on.
 */
const NOT_COMPARED = new Set(["audit_logs", "ratelimit_windows", "ratelimit_log", "verification_event_batches", "data_keys",
  "verification_rollups_minute", "verification_rollups_hour", "verification_rollups_day", "verification_rollups_month"]);

let h: Harness;
const world: MutationWorld = { h: undefined as unknown as Harness, apiId: "", secrets: new Set() };
const mutations = auditMutations(world);

beforeAll(async () => {
  h = await startHarness();
  world.h = h;
  world.apiId = await createApi(h, "atomicity");
});
afterAll(async () => { await h.stop(); });

/** Every row of every compared table, as text. */
function snapshot(): Record<string, string[]> {
  const sqlite = h.embedded.storage.sqlite;
  const tables = sqlite.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all();
  const out: Record<string, string[]> = {};
  for (const { name } of tables) {
    if (NOT_COMPARED.has(name)) continue;
    out[name] = sqlite.query(`SELECT * FROM "${name}"`).all().map((row) => JSON.stringify(row)).sort();
  }
  return out;
}

const auditCount = () => h.embedded.storage.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM audit_logs").get()!.n;

/** Runs `fn` while the audit log cannot be written. */
async function withAuditDown<T>(fn: () => T | Promise<T>): Promise<T> {
  h.embedded.storage.sqlite.run("ALTER TABLE audit_logs RENAME TO audit_logs_down");
  try {
    return await fn();
  } finally {
    h.embedded.storage.sqlite.run("ALTER TABLE audit_logs_down RENAME TO audit_logs");
  }
}

describe("API changes: no entry, no change", () => {
  for (const m of mutations) {
    test(`${m.path}: ${m.name}`, async () => {
      const { body, expected } = await m.prepare();
      const before = snapshot();
      const entriesBefore = auditCount();
      const failed = await withAuditDown(() => h.post(m.path, body));
      const afterFailure = snapshot();
      const again = await h.post(m.path, body);
      expect(again.status).toBe(200);
      const want = expected(again.body.data);
      if (want.length === 0) {
        // A call that changes nothing writes no entry, so it does not depend on the audit log.
        expect(failed.status).toBe(200);
      } else {
        expect({ status: failed.status, errorStatus: failed.body.error?.status }).toEqual({ status: 500, errorStatus: 500 });
        expect(afterFailure).toEqual(before);
      }
      expect(auditCount()).toBe(entriesBefore + want.length);
    });
  }
});

describe("CLI changes: no entry, no change", () => {
  const cli = { type: "cli" as const, id: "cli", name: "tollgate CLI" };

  test("workspace create and update, root-key create and revoke", async () => {
    const ws = () => h.running.services.workspaces;
    const rk = await ws().createRootKey({ workspace: "default", name: "to-revoke", permissions: ["api.*.read_api"] }, cli);
    const before = snapshot();
    const entriesBefore = auditCount();
    const outcomes = await withAuditDown(() => [
      () => ws().create({ name: "never" }, cli),
      () => ws().setAnalytics("default", true, cli),
      () => ws().createRootKey({ workspace: "default", name: "never", permissions: ["api.*.read_api"] }, cli),
      () => ws().revokeRootKey(rk.id, cli),
    ].map((change) => {
      try {
        change();
        return "stored";
      } catch {
        return "refused";
      }
    }));
    expect(outcomes).toEqual(["refused", "refused", "refused", "refused"]);
    expect(snapshot()).toEqual(before);
    expect(auditCount()).toBe(entriesBefore);
    // No cache took the revocation for done: the key still authenticates.
    expect((await h.post("/v2/apis.getApi", { apiId: world.apiId }, { key: rk.key })).status).toBe(200);
  });
});
