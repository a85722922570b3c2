/**
 * One row for every table of the PostgreSQL schema, in an order that satisfies the foreign keys,
 * for test/cluster/pg-migrations.test.ts: times beyond 2^31 ms, counts up to 2^53 - 1, both
 * booleans, JSON with non-ASCII text, and NULLs in nullable columns. Identity columns are left out
 * (PostgreSQL numbers them, as SQLite numbers a rowid).
 */
import type { PgTable } from "drizzle-orm/pg-core";
import * as pg from "../../src/storage/pg/schema/index.ts";

/** 2100-01-01 in ms: far past what an int4 holds. */
const LATE_MS = 4_102_444_800_000;
const BIG_COUNT = Number.MAX_SAFE_INTEGER;
const NON_ASCII = "Zoë · 東京 · 🚀 · \"quoted\"";

export interface SampleRow {
  table: PgTable;
  values: Record<string, unknown>;
}

const row = <T extends PgTable>(table: T, values: T["$inferInsert"]): SampleRow => ({ table, values });

const workspaceId = "ws_1";
const createdAt = LATE_MS;

export const SAMPLE_ROWS: readonly SampleRow[] = [
  row(pg.workspaces, { id: workspaceId, name: `Acme ${NON_ASCII}`, analyticsEnabled: true, enabled: false, createdAt, updatedAt: null }),
  row(pg.rootKeys, {
    id: "rk_1", workspaceId, name: "ops", hash: "hash_root", start: "tg_", permissions: ["api.*.read_key", NON_ASCII],
    enabled: true, expiresAt: LATE_MS + 1, createdAt: 1, revokedAt: null,
  }),
  row(pg.keySpaces, { id: "ks_1", workspaceId, defaultPrefix: null, defaultBytes: 32, storeEncryptedKeys: false, createdAt }),
  row(pg.apis, {
    id: "api_1", workspaceId, keySpaceId: "ks_1", name: "payments", deleteProtection: true, ipWhitelist: null,
    createdAt, updatedAt: LATE_MS, deletedAt: null,
  }),
  row(pg.identities, { id: "id_1", workspaceId, externalId: "user_1", meta: { name: NON_ASCII, nested: { n: 1, on: false } }, createdAt, updatedAt: null, deletedAt: null }),
  row(pg.keys, {
    id: "key_1", workspaceId, keySpaceId: "ks_1", hash: "hash_key", start: "sk_", name: NON_ASCII, identityId: "id_1",
    meta: { plan: "pro", note: NON_ASCII, tags: ["a", "ü"] }, expiresAt: null, enabled: true, remaining: BIG_COUNT,
    refillAmount: 2 ** 40, refillDay: 31, lastRefillAt: LATE_MS, recoverable: true, encrypted: "ciphertext",
    createdAt, updatedAt: null, lastUsedAt: LATE_MS, deletedAt: null,
  }),
  row(pg.dataKeys, { workspaceId, encrypted: "wrapped", createdAt }),
  row(pg.permissions, { id: "perm_1", workspaceId, name: NON_ASCII, slug: "documents.read", description: null, createdAt, updatedAt: null }),
  row(pg.roles, { id: "role_1", workspaceId, name: "admin", description: NON_ASCII, createdAt, updatedAt: LATE_MS }),
  row(pg.rolePermissions, { roleId: "role_1", permissionId: "perm_1", workspaceId, createdAt }),
  row(pg.keyPermissions, { keyId: "key_1", permissionId: "perm_1", workspaceId, createdAt }),
  row(pg.keyRoles, { keyId: "key_1", roleId: "role_1", workspaceId, createdAt }),
  row(pg.ratelimitConfigs, {
    id: "rl_1", workspaceId, keyId: "key_1", identityId: null, name: "requests", limit: BIG_COUNT,
    durationMs: 2_592_000_000, autoApply: true, createdAt, updatedAt: null,
  }),
  row(pg.ratelimitNamespaces, { id: "ns_1", workspaceId, name: "email", createdAt, updatedAt: null, deletedAt: null }),
  row(pg.ratelimitOverrides, {
    id: "ovr_1", workspaceId, namespaceId: "ns_1", identifier: "user_*", limit: 10, durationMs: 60_000,
    createdAt, updatedAt: null, deletedAt: LATE_MS,
  }),
  row(pg.ratelimitWindows, { counter: "counter_1", durationMs: 2_592_000_000, windowStartMs: LATE_MS, count: BIG_COUNT, previousCount: 0, expiresMs: LATE_MS }),
  row(pg.ratelimitLog, { windows: 3, expiresMs: LATE_MS, data: "AAEC" }),
  row(pg.auditLogs, {
    id: "aud_1", workspaceId, time: LATE_MS, event: "key.create", actorType: "key", actorId: "rk_1", actorName: null,
    resources: [{ type: "key", id: "key_1", name: NON_ASCII }], description: NON_ASCII, remoteIp: "::1", userAgent: null,
  }),
  row(pg.creditJournal, { entries: JSON.stringify([["key_1", 2 ** 40]]) }),
  row(pg.clusterChangeNotices, { workspaceId, version: BIG_COUNT, txId: BIG_COUNT }),
  row(pg.jobRuns, { job: "credit-refill", tickMs: LATE_MS, owner: NON_ASCII, leaseUntilMs: LATE_MS + 1, finishedAtMs: null }),
  row(pg.creditSpends, { id: "spend_1", charges: JSON.stringify({ key_1: BIG_COUNT }), state: "refunded", createdAt: new Date(LATE_MS) }),
  row(pg.clusterSettings, { name: "master_key_fingerprint", value: NON_ASCII, setAtMs: LATE_MS }),
  row(pg.workspaceUsage, { workspaceId, keys: BIG_COUNT, identities: 1, permissions: 2, roles: 3, namespaces: 4, bytes: BIG_COUNT }),
  row(pg.pgVerificationEvents, {
    requestId: "req_1", time: LATE_MS, workspaceId, keySpaceId: "ks_1", keyId: "key_1", identityId: "id_1", externalId: NON_ASCII,
    outcome: "VALID", tags: JSON.stringify([NON_ASCII]), spentCredits: BIG_COUNT, latencyMs: 0.25,
  }),
  ...[pg.pgVerificationsPerMinute, pg.pgVerificationsPerHour, pg.pgVerificationsPerDay, pg.pgVerificationsPerMonth].map((table) => row(table, {
    time: LATE_MS, workspaceId, keySpaceId: "ks_1", keyId: "key_1", identityId: "id_1", externalId: NON_ASCII, outcome: "VALID",
    tags: "[]", count: BIG_COUNT, spentCredits: BIG_COUNT, latencySumMs: 1.5, latencyMaxMs: 0.75,
  })),
  ...[pg.pgVerificationTotalsPerMinute, pg.pgVerificationTotalsPerHour, pg.pgVerificationTotalsPerDay, pg.pgVerificationTotalsPerMonth].map((table) => row(table, {
    time: LATE_MS, workspaceId, keySpaceId: "ks_1", outcome: NON_ASCII, count: BIG_COUNT, spentCredits: BIG_COUNT,
  })),
  ...[pg.pgRatelimitDecisionsPerMinute, pg.pgRatelimitDecisionsPerHour, pg.pgRatelimitDecisionsPerDay, pg.pgRatelimitDecisionsPerMonth].map((table) => row(table, {
    time: LATE_MS, workspaceId, namespaceId: NON_ASCII, passed: BIG_COUNT, blocked: 0,
  })),
];
