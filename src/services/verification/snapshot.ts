/**
 * Everything a verification needs to know about one key, loaded in one go. This is the unit the
 * key cache holds: it carries only values read from SQLite plus `held`, which is derived from
 * `permissions` when the snapshot is built and replaced with it (a change drops the whole snapshot).
 *
 * A cold load is one prepared statement (subqueries gather roles, permissions, identity and limits
 * as JSON), not one query per table: it runs on the hot path for every key seen for the first time.
 * A key that holds thousands of permissions gets them in slices instead (many-permissions.ts).
 * A large meta (of the key or its identity) stays the JSON text SQLite holds and goes into answers
 * as it is (lib/raw-json.ts): parsing a megabyte and serialising it again into every answer held
 * the event loop for milliseconds. A small one is parsed: JSON.stringify writes it faster than
 * the walk that splices raw text in.
 */
import type { Database, Statement } from "bun:sqlite";
import { RawJson } from "../../lib/raw-json.ts";
import type { Maybe } from "../../storage/work.ts";
import type { RatelimitConfig } from "../identities/index.ts";
import type { CreditBalances } from "../credits/index.ts";
import type { HeldPermissions } from "./permission-query.ts";
import { answerList, permissionSet, type PermissionSet } from "./permission-set.ts";
import { ManyPermissionLoads, SLICED_LOAD_MIN_ROWS } from "./many-permissions.ts";
import { SharedValues } from "./shared-values.ts";

/** A stored meta object: parsed, or (a large one) its JSON text; both serialise to the same JSON. */
export type Meta = Record<string, unknown> | RawJson;

export interface KeySnapshot {
  keyId: string;
  workspaceId: string;
  keySpaceId: string;
  apiId: string | null;
  apiDeleted: boolean;
  name: string | null;
  meta: Meta | null;
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
  /** `permissions` and `roles` as answers carry them (permission-set.ts): a long list as its JSON text. */
  answer: { permissions: readonly string[] | RawJson; roles: readonly string[] | RawJson };
  identity: { id: string; externalId: string; meta: Meta | null; ratelimits: RatelimitConfig[] } | null;
  ratelimits: RatelimitConfig[];
  /** Whether `meta`, the identity's, or a list in `answer` is kept as RawJson (an answer that holds it is marked for jsonText). */
  holdsRawJson: boolean;
  /** Estimated bytes of memory this snapshot holds, shared values counted in full, for the key cache's budget. */
  sizeBytes: number;
}

/** One row of the snapshot statement: SQLite's here, PostgreSQL's (pg-snapshot.ts) gives the same texts. */
export interface SnapshotRow {
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
  /** Null when the key holds too many to gather in one statement (SQLite only: they are loaded in slices). */
  permissions: string | null;
  /** JSON of the live identity with its limits (without its meta), null when the key has none. */
  identity: string | null;
  /** The live identity's meta as stored. */
  identity_meta: string | null;
  ratelimits: string;
}

const limitsOf = (owner: "key_id" | "identity_id", id: string) => `(SELECT json_group_array(json_object(
    'id', id, 'name', name, 'limit', "limit", 'duration', duration_ms, 'autoApply', json(CASE auto_apply WHEN 1 THEN 'true' ELSE 'false' END)))
  FROM (SELECT * FROM ratelimit_configs WHERE ${owner} = ${id} ORDER BY name))`;

// Scalar subqueries only: a LEFT JOIN here made the whole statement several times slower.
// Roles sorted by name; permissions held directly or through a role, unique and sorted (UNION does both),
// unless there are many: counting the rows (up to the threshold) reads only covering indexes, and CASE runs the subquery only when chosen.
const snapshotSql = (slicedMinRows: number) => `SELECT k.id, k.workspace_id, k.key_space_id, k.name, k.meta, k.expires_at, k.enabled, k.deleted_at, k.remaining,
  (SELECT json_array(id, deleted_at) FROM apis WHERE key_space_id = k.key_space_id LIMIT 1) AS api,
  (SELECT json_group_array(name) FROM (SELECT r.name FROM key_roles kr JOIN roles r ON r.id = kr.role_id WHERE kr.key_id = k.id ORDER BY r.name)) AS roles,
  CASE WHEN (SELECT count(*) FROM (SELECT 1 FROM key_permissions WHERE key_id = k.id LIMIT ${slicedMinRows}))
      + (SELECT count(*) FROM (SELECT 1 FROM key_roles kr JOIN role_permissions rp ON rp.role_id = kr.role_id WHERE kr.key_id = k.id LIMIT ${slicedMinRows})) < ${slicedMinRows}
    THEN (SELECT json_group_array(slug) FROM (
      SELECT p.slug FROM key_permissions kp JOIN permissions p ON p.id = kp.permission_id WHERE kp.key_id = k.id
      UNION
      SELECT p.slug FROM key_roles kr JOIN role_permissions rp ON rp.role_id = kr.role_id JOIN permissions p ON p.id = rp.permission_id WHERE kr.key_id = k.id
      ORDER BY 1)) END AS permissions,
  (SELECT json_object('id', id, 'externalId', external_id, 'ratelimits', json(${limitsOf("identity_id", "k.identity_id")}))
    FROM identities WHERE id = k.identity_id AND deleted_at IS NULL) AS identity,
  (SELECT meta FROM identities WHERE id = k.identity_id AND deleted_at IS NULL) AS identity_meta,
  ${limitsOf("key_id", "k.id")} AS ratelimits
FROM keys k
WHERE k.hash = ?1`;

/** Loads key snapshots by hash with one prepared statement. */
export class SnapshotLoader {
  private readonly statement: Statement<SnapshotRow, [string]>;
  private readonly shared: SharedValues;
  private readonly sql: string;
  private readonly sliced: ManyPermissionLoads;
  private readonly balance: Statement<{ remaining: number | null }, [string]>;

  /**
   * `sharedValueBytes` bounds the values kept for sharing between snapshots (shared-values.ts);
   * `slicedLoads` how many keys holding many permissions are loaded at once (many-permissions.ts).
   */
  constructor(sqlite: Database, private readonly credits: Pick<CreditBalances, "pendingOf">, sharedValueBytes: number, slicedLoads = 2) {
    const path = sqlite.filename;
    // Slices need a second connection to the same file: an in-memory database gathers every set in one statement.
    const inMemory = path === "" || path === ":memory:";
    this.sql = snapshotSql(inMemory ? Number.MAX_SAFE_INTEGER : SLICED_LOAD_MIN_ROWS);
    this.statement = sqlite.query<SnapshotRow, [string]>(this.sql);
    this.balance = sqlite.query<{ remaining: number | null }, [string]>("SELECT remaining FROM keys WHERE id = ?1");
    this.shared = new SharedValues(sharedValueBytes);
    this.sliced = new ManyPermissionLoads(path, slicedLoads);
  }

  /**
   * The snapshot of the key with this hash, or undefined when no key has it; `remaining` is its
   * balance. At once, except for a key that holds many permissions: then a promise, whose row is
   * read again with the slices, in their transaction (many-permissions.ts).
   */
  load(hash: string): Maybe<KeySnapshot | undefined> {
    const row = this.statement.get(hash);
    if (!row) return undefined;
    if (row.permissions !== null) return this.finish(row);
    const readRow = (db: Database) => db.query<SnapshotRow, [string]>(this.sql).get(hash);
    return this.sliced.load(readRow, (r) => (r.permissions === null ? r.id : undefined)).then((loaded) => {
      if (loaded === null) return undefined;
      // The balance decides spends (LedgerCredits), so it is read again now, in the same turn as the
      // pending spends: a spend committed while the slices were read is in one or the other.
      if (loaded.row.remaining !== null) loaded.row.remaining = this.balance.get(loaded.row.id)?.remaining ?? loaded.row.remaining;
      return this.finish(loaded.row, loaded.many);
    });
  }

  /** The snapshot of a row read in this turn, less the spends this process has not committed yet. */
  private finish(row: SnapshotRow, many?: PermissionSet): KeySnapshot {
    const snap = toSnapshot(row, this.shared, many);
    if (snap.remaining !== null) snap.remaining -= this.credits.pendingOf(snap.keyId);
    return snap;
  }
}

/**
 * A row as a snapshot; the values many snapshots hold alike come from `shared`. `many` is the
 * permission set loaded in slices when the row has none (SnapshotLoader).
 */
export function toSnapshot(row: SnapshotRow, shared: SharedValues, many?: PermissionSet): KeySnapshot {
  const permissionsJson = row.permissions ?? many?.json ?? "[]";
  const { permissions, held, answer } = shared.get<PermissionSet>(`p${permissionsJson}`, () =>
    many ?? permissionSet(JSON.parse(permissionsJson) as string[], permissionsJson));
  const id = (value: string): string => shared.get(`i${value}`, () => value);
  const [apiId, apiDeletedAt] = row.api === null ? [null, null] : (JSON.parse(row.api) as [string, number | null]);
  const identity = row.identity === null ? null : { ...(JSON.parse(row.identity) as Omit<NonNullable<KeySnapshot["identity"]>, "meta">), meta: toMeta(row.identity_meta) };
  const meta = toMeta(row.meta);
  // The permission and role lists, which every answer serialises, are only typed read-only: JSON.stringify
  // takes a slow path for a frozen array. The shared empty limit list is frozen.
  const roles = shared.get(`r${row.roles}`, () => JSON.parse(row.roles) as string[]);
  const rolesAnswer = answerList(roles, row.roles);
  // A key's own limits are shared only when it has none (the common case): their ids differ otherwise.
  const ratelimits = row.ratelimits === "[]"
    ? shared.get(`l${row.ratelimits}`, () => Object.freeze(JSON.parse(row.ratelimits) as RatelimitConfig[]) as RatelimitConfig[])
    : (JSON.parse(row.ratelimits) as RatelimitConfig[]);
  const workspaceId = id(row.workspace_id);
  const keySpaceId = id(row.key_space_id);
  return {
    keyId: row.id,
    workspaceId,
    keySpaceId,
    apiId: apiId === null ? null : id(apiId),
    apiDeleted: apiId === null || apiDeletedAt !== null,
    name: row.name,
    meta,
    expiresAt: row.expires_at,
    enabled: row.enabled === 1,
    deleted: row.deleted_at !== null,
    remaining: row.remaining,
    roles,
    permissions,
    held,
    answer: { permissions: answer, roles: rolesAnswer },
    identity,
    ratelimits,
    holdsRawJson: meta instanceof RawJson || identity?.meta instanceof RawJson || answer instanceof RawJson || rolesAnswer instanceof RawJson,
    sizeBytes: estimateBytes(row, permissionsJson, permissions.length + roles.length + ratelimits.length + (identity?.ratelimits.length ?? 0)),
  };
}

/** Metas of at least this many characters stay JSON text; shorter ones are parsed. */
const RAW_META_MIN_CHARS = 1024;

function toMeta(json: string | null): Meta | null {
  if (json === null) return null;
  return json.length >= RAW_META_MIN_CHARS ? new RawJson(json) : (JSON.parse(json) as Record<string, unknown>);
}

/**
 * The snapshot object, its identity object, the scalars and short strings in them,
 * and a cache entry's share of lru-cache's bookkeeping and the key cache's indexes.
 */
const SNAPSHOT_BASE_BYTES = 896;
/** Per item of a permission, role or limit list: the array slot, the string or object, its index entry. */
const LIST_ITEM_BYTES = 96;
/** A parsed meta takes up to several times its JSON text (many small objects); text up to 2 bytes a character. */
const PARSED_META_BYTES_PER_CHAR = 8;
const TEXT_BYTES_PER_CHAR = 2;

/**
 * An estimate from the JSON texts the snapshot was built from; shared values are counted as if held
 * alone. The permission list's text counts as well as its items: a long one is kept for answers.
 */
function estimateBytes(row: SnapshotRow, permissionsJson: string, listItems: number): number {
  const metaBytes = (json: string | null) => (json === null ? 0 : json.length * (json.length >= RAW_META_MIN_CHARS ? TEXT_BYTES_PER_CHAR : PARSED_META_BYTES_PER_CHAR));
  const texts = (row.name?.length ?? 0) + row.roles.length + permissionsJson.length + (row.identity?.length ?? 0) + row.ratelimits.length;
  return SNAPSHOT_BASE_BYTES + texts * TEXT_BYTES_PER_CHAR + listItems * LIST_ITEM_BYTES + metaBytes(row.meta) + metaBytes(row.identity_meta);
}
