/**
 * A single box's data dir filled through the real API (test/cluster/copy-from-sqlite.test.ts):
 * two workspaces with root keys, APIs (one deleted), keys with meta, credits, refills,
 * permissions, roles and rate limits, an identity with its limits, a recoverable key, namespaces
 * with overrides, credit spends and rate-limit checks, and the audit entries all of them write.
 * The service is stopped at the end, as the copy requires. Then two rows written as only an
 * older or crashed service leaves them: a legacy `ratelimit_windows` row and a credit spend still
 * in the journal (a clean stop folds the journal into the balances).
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { openStorage } from "../../src/storage/db.ts";
import { DATABASE_FILE } from "../../src/storage/data-dir.ts";
import { TEST_ACTOR } from "../support/contract.ts";
import { startHarness } from "../support/harness.ts";

export interface EmbeddedDataSet {
  dataDir: string;
  masterKey: Buffer;
  /** Plaintexts of keys created, by key id. */
  plaintexts: Map<string, string>;
  recoverableKeyId: string;
}

const NON_ASCII = "Zoë · 東京 · 🚀 · \"quoted\"";

export async function buildEmbeddedDataSet(): Promise<EmbeddedDataSet> {
  const masterKey = randomBytes(32);
  const h = await startHarness({ env: { TOLLGATE_MASTER_KEY: masterKey.toString("base64") } });
  const plaintexts = new Map<string, string>();
  const call = async (path: string, body: unknown, key?: string) => {
    const res = await h.post(path, body, { key });
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data;
  };
  const createKey = async (body: Record<string, unknown>) => {
    const data = await call("/v2/keys.createKey", body);
    plaintexts.set(data.keyId, data.key);
    return data as { keyId: string; key: string };
  };

  const other = await h.running.services.workspaces.create({ name: "other" }, TEST_ACTOR);
  const otherRoot = await h.rootKeyWith(["api.*.create_api", "api.*.create_key", "api.*.read_key"], other.name);
  await h.rootKeyWith(["api.*.read_api"]);

  const { apiId } = await call("/v2/apis.createApi", { name: "payments" });
  const gone = await call("/v2/apis.createApi", { name: "retired" });
  await call("/v2/apis.deleteApi", { apiId: gone.apiId });
  const otherApi = await call("/v2/apis.createApi", { name: "theirs" }, otherRoot);

  await call("/v2/permissions.createPermission", { name: "documents.read", slug: "documents.read", description: NON_ASCII });
  await call("/v2/permissions.createPermission", { name: "documents.write", slug: "documents.write" });
  await call("/v2/permissions.createRole", { name: "editor", description: "edits", permissions: ["documents.read", "documents.write"] });
  await call("/v2/identities.createIdentity", {
    externalId: "user_1", meta: { name: NON_ASCII, nested: { on: false, n: 1.5 } },
    ratelimits: [{ name: "per-user", limit: 100, duration: 60_000 }],
  });

  const full = await createKey({
    apiId, prefix: "pay", name: NON_ASCII, externalId: "user_1", meta: { plan: "pro", tags: ["a", "ü"], n: 2 ** 53 - 1 },
    roles: ["editor"], permissions: ["documents.read"], expires: h.clock.now() + 86_400_000,
    credits: { remaining: 1000, refill: { interval: "monthly", amount: 500, refillDay: 31 } },
    ratelimits: [{ name: "per-key", limit: 50, duration: 1000, autoApply: true }, { name: "daily", limit: 10_000, duration: 86_400_000 }],
  });
  const recoverable = await createKey({ apiId, recoverable: true, name: "recoverable" });
  await createKey({ apiId, credits: { remaining: 20, refill: { interval: "daily", amount: 20 } } });
  const disabled = await createKey({ apiId, enabled: false, meta: { note: "off" } });
  await call("/v2/keys.createKey", { apiId: otherApi.apiId }, otherRoot).then((d) => plaintexts.set(d.keyId, d.key));

  await call("/v2/keys.updateCredits", { keyId: full.keyId, operation: "decrement", value: 7 });
  await call("/v2/keys.updateKey", { keyId: disabled.keyId, name: "renamed" });
  for (let i = 0; i < 3; i++) await call("/v2/keys.verifyKey", { key: full.key, credits: { cost: 2 }, ratelimits: [{ name: "per-user" }] });
  await call("/v2/keys.verifyKey", { key: recoverable.key });

  for (const identifier of ["user_a", "user_b", "vip_1", "user_a"]) {
    await call("/v2/ratelimit.limit", { namespace: "email", identifier, limit: 10, duration: 60_000 });
  }
  await call("/v2/ratelimit.setOverride", { namespace: "email", identifier: "vip_*", limit: 1000, duration: 60_000 });
  await call("/v2/ratelimit.setOverride", { namespace: "email", identifier: "blocked", limit: 0, duration: 60_000 });
  await call("/v2/ratelimit.limit", { namespace: "sms", identifier: "user_a", limit: 5, duration: 3_600_000, cost: 2 });

  await h.running.stop();
  leaveCrashState(h.dataDir, full.keyId);
  return { dataDir: h.dataDir, masterKey, plaintexts, recoverableKeyId: recoverable.keyId };
}

/** Rows only an older version (the legacy windows) or a killed service (an unfolded spend) leaves. */
function leaveCrashState(dataDir: string, keyId: string): void {
  const storage = openStorage(join(dataDir, DATABASE_FILE));
  try {
    storage.sqlite.run("INSERT INTO ratelimit_windows (counter, duration_ms, window_start_ms, count, previous_count, expires_ms) VALUES (?, ?, ?, ?, ?, ?)",
      ["ws|legacy|user_z", 60_000, 4_102_444_800_000, 9_007_199_254_740_991, 3, 4_102_444_860_000]);
    storage.sqlite.run("INSERT INTO credit_journal (entries) VALUES (?)", [JSON.stringify([[keyId, 3]])]);
  } finally {
    storage.close();
  }
}
