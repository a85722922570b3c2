/**
 * Everything a verification needs to know about one key, loaded in one go. This is the unit the
 * key cache holds: it carries only values read from SQLite plus `held`, which is derived from
 * `permissions` when the snapshot is built and replaced with it (a change drops the whole snapshot).
 *
 * A cold load is one prepared statement (subqueries gather roles, permissions, identity and limits
 * as JSON), not one query per table: it runs on the hot path for every key seen for the first time.
 */
import type { Database, Statement } from "bun:sqlite";
import { LRUCache } from "lru-cache";
import type { RatelimitConfig } from "../identities/index.ts";
import type { CreditBalances } from "../credits/index.ts";
import type { EventSubject } from "../analytics/index.ts";
import { holdPermissions, type HeldPermissions } from "./permission-query.ts";

export interface KeySnapshot {
  keyId: string;
  workspaceId: string;
  keySpaceId: string;
  apiId: string | null;
  apiDeleted: boolean;
  name: string | null;
  meta: Record<string, unknown> | null;
  expiresAt: number | null;
  enabled: boolean;
  deleted: boolean;
  /** The credit balance (null: unlimited), kept in step with this process's spends. */
  remaining: number | null;
  /** Shared with other snapshots (see `shared` below): never mutated. */
  roles: readonly string[];
  /** Shared with other snapshots (see `shared` below): never mutated. */
  permissions: readonly string[];
  /** `permissions` indexed for the query evaluator. */
  held: HeldPermissions;
  identity: { id: string; externalId: string; meta: Record<string, unknown> | null; ratelimits: RatelimitConfig[] } | null;
  ratelimits: RatelimitConfig[];
  /** Whom this key's verifications are counted for: one object, passed with every event of the snapshot. */
  subject: EventSubject;
}

interface SnapshotRow {
  id: string;
  workspace_id: string;
  key_space_id: string;
  name: string | null;
  meta: string | null;
  expires_at: number | null;
  enabled: number;
  deleted_at: number | null;
  remaining: number | null;
  /** JSON `[id, deleted_at]` of the key space's API, null when it has none. */
  api: string | null;
  roles: string;
  permissions: string;
  /** JSON of the live identity with its limits, null when the key has none. */
  identity: string | null;
  ratelimits: string;
}

const limitsOf = (owner: "key_id" | "identity_id", id: string) => `(SELECT json_group_array(json_object(
    'id', id, 'name', name, 'limit', "limit", 'duration', duration_ms, 'autoApply', json(CASE auto_apply WHEN 1 THEN 'true' ELSE 'false' END)))
  FROM (SELECT * FROM ratelimit_configs WHERE ${owner} = ${id} ORDER BY name))`;

// Scalar subqueries only: in measurements a LEFT JOIN here made the whole statement several times slower.
// Roles sorted by name; permissions held directly or through a role, unique and sorted (UNION does both).
const SNAPSHOT_SQL = `SELECT k.id, k.workspace_id, k.key_space_id, k.name, k.meta, k.expires_at, k.enabled, k.deleted_at, k.remaining,
  (SELECT json_array(id, deleted_at) FROM apis WHERE key_space_id = k.key_space_id LIMIT 1) AS api,
  (SELECT json_group_array(name) FROM (SELECT r.name FROM key_roles kr JOIN roles r ON r.id = kr.role_id WHERE kr.key_id = k.id ORDER BY r.name)) AS roles,
  (SELECT json_group_array(slug) FROM (
      SELECT p.slug FROM key_permissions kp JOIN permissions p ON p.id = kp.permission_id WHERE kp.key_id = k.id
      UNION
      SELECT p.slug FROM key_roles kr JOIN role_permissions rp ON rp.role_id = kr.role_id JOIN permissions p ON p.id = rp.permission_id WHERE kr.key_id = k.id
      ORDER BY 1)) AS permissions,
  (SELECT json_object('id', id, 'externalId', external_id, 'meta', json(meta), 'ratelimits', json(${limitsOf("identity_id", "k.identity_id")}))
    FROM identities WHERE id = k.identity_id AND deleted_at IS NULL) AS identity,
  ${limitsOf("key_id", "k.id")} AS ratelimits
FROM keys k
WHERE k.hash = ?1`;

/** Loads key snapshots by hash with one prepared statement. */
export class SnapshotLoader {
  private readonly statement: Statement<SnapshotRow, [string]>;

  constructor(sqlite: Database, private readonly credits: Pick<CreditBalances, "pendingOf">) {
    this.statement = sqlite.query<SnapshotRow, [string]>(SNAPSHOT_SQL);
  }

  /** The snapshot of the key with this hash, or undefined when no key has it; `remaining` is its balance. */
  load(hash: string): KeySnapshot | undefined {
    const row = this.statement.get(hash);
    if (!row) return undefined;
    const snap = toSnapshot(row);
    if (snap.remaining !== null) snap.remaining -= this.credits.pendingOf(snap.keyId);
    return snap;
  }
}

/**
 * Values that many snapshots hold alike (a permission set with its index, a role list, the ids of a
 * workspace, key space and API, an empty list of limits) are kept once and shared: a full key
 * cache then holds several times fewer objects for the garbage collector to walk (100,000
 * snapshots were 1.65 million objects and 100 MB of heap). Bounded: the least used go first, and
 * snapshots keep what they already share. The limit lists are frozen. The permission and role
 * lists, which every answer serialises, are only typed read-only: JSON.stringify takes a slow
 * path for a frozen array, about 1 µs more per verification.
 */
const shared = new LRUCache<string, object | string>({ max: 10_000 });

function sharedValue<T extends object | string>(key: string, make: () => T): T {
  const known = shared.get(key);
  if (known !== undefined) return known as T;
  const value = make();
  shared.set(key, value);
  return value;
}

interface HeldSet {
  permissions: readonly string[];
  held: HeldPermissions;
}

function heldSet(json: string): HeldSet {
  return sharedValue(`p${json}`, () => {
    const permissions = JSON.parse(json) as string[];
    return { permissions, held: holdPermissions(permissions) };
  });
}

/** A list many snapshots hold alike, parsed once and shared; frozen when `freeze` (see above). */
function sharedList<T>(prefix: string, json: string, freeze: boolean): T[] {
  return sharedValue(`${prefix}${json}`, () => {
    const list = JSON.parse(json) as T[];
    return freeze ? (Object.freeze(list) as T[]) : list;
  });
}
const id = (value: string): string => sharedValue(`i${value}`, () => value);

function toSnapshot(row: SnapshotRow): KeySnapshot {
  const { permissions, held } = heldSet(row.permissions);
  const [apiId, apiDeletedAt] = row.api === null ? [null, null] : (JSON.parse(row.api) as [string, number | null]);
  const identity = parseObject(row.identity) as KeySnapshot["identity"];
  const workspaceId = id(row.workspace_id);
  const keySpaceId = id(row.key_space_id);
  return {
    keyId: row.id,
    workspaceId,
    keySpaceId,
    apiId: apiId === null ? null : id(apiId),
    apiDeleted: apiId === null || apiDeletedAt !== null,
    name: row.name,
    meta: parseObject(row.meta),
    expiresAt: row.expires_at,
    enabled: row.enabled === 1,
    deleted: row.deleted_at !== null,
    remaining: row.remaining,
    roles: sharedList<string>("r", row.roles, false),
    permissions,
    held,
    identity,
    // A key's own limits are shared only when it has none (the common case): their ids differ otherwise.
    ratelimits: row.ratelimits === "[]" ? sharedList<RatelimitConfig>("l", row.ratelimits, true) : (JSON.parse(row.ratelimits) as RatelimitConfig[]),
    subject: { workspaceId, keySpaceId, keyId: row.id, identityId: identity?.id ?? "", externalId: identity?.externalId ?? "" },
  };
}

function parseObject(json: string | null): Record<string, unknown> | null {
  return json === null ? null : (JSON.parse(json) as Record<string, unknown>);
}
