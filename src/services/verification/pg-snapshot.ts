/**
 * The cold load of a key snapshot from PostgreSQL (cluster mode): one prepared statement that gives
 * the row SQLite's (snapshot.ts) gives, turned into a snapshot by the same `toSnapshot`.
 *
 * The JSON columns are written as text by hand, not with json_agg / json_build_object: those put
 * spaces in ("a", "b" and "k" : v) where SQLite writes none, and a snapshot's estimated size (and
 * its shared values' keys) come from the texts' lengths, so the texts must be SQLite's to the byte.
 * Strings are escaped by to_json, which escapes as SQLite does (quote, backslash, \b \f \n \r \t,
 * other control characters as \u00xx, nothing else). Lists are sorted with COLLATE "C", byte
 * order, which is SQLite's BINARY order for UTF-8 text, whatever the database's own collation.
 * The one choice SQLite leaves open, which API of a key space (LIMIT 1), has one answer: every key
 * space belongs to exactly one API. int8 columns are read as float8 (Bun's client returns int8 as
 * strings), which rounds as bun:sqlite's conversion to a JS number does; booleans as 0/1.
 *
 * Credits: `remaining` is PostgreSQL's own balance. In cluster mode spends are decided by
 * PostgreSQL (services/credits/pg-spender.ts), so no spend is pending in this process to subtract.
 */
import type { SQL } from "bun";
import { toSnapshot, type KeySnapshot, type SnapshotRow } from "./snapshot.ts";
import { SharedValues } from "./shared-values.ts";
import { permissionSetInSlices } from "./permission-set.ts";

/** Permission lists of at least this many characters (some thousands of names) are indexed in slices. */
const SLICED_INDEX_MIN_CHARS = 32_768;
import { DEFAULT_DATABASE_TIMEOUT_MS, withinPg } from "../../storage/pg/records/index.ts";

/** `expr` (text) as a JSON string. */
const jsonString = (expr: string) => `to_json(${expr})::text`;

/** `[items]` of the `item` texts (already JSON) of the rows, sorted by `orderBy`; `[]` for none. */
const jsonArrayAgg = (item: string, orderBy: string) => `'[' || coalesce(string_agg(${item}, ',' ORDER BY ${orderBy} COLLATE "C"), '') || ']'`;

const limitsOf = (owner: "key_id" | "identity_id", id: string) => `(SELECT ${jsonArrayAgg(
  `'{"id":' || ${jsonString("l.id")} || ',"name":' || ${jsonString("l.name")} || ',"limit":' || l."limit"::text
    || ',"duration":' || l.duration_ms::text || ',"autoApply":' || CASE WHEN l.auto_apply THEN 'true' ELSE 'false' END || '}'`,
  "l.name",
)}
  FROM ratelimit_configs l WHERE l.${owner} = ${id})`;

// Scalar subqueries, as in SQLite's statement. Permissions held directly or through a role: UNION makes them unique.
export const PG_SNAPSHOT_SQL = `SELECT k.id, k.workspace_id, k.key_space_id, k.name, k.meta, k.expires_at::float8 AS expires_at,
  k.enabled::int AS enabled, k.deleted_at::float8 AS deleted_at, k.remaining::float8 AS remaining,
  (SELECT '[' || ${jsonString("a.id")} || ',' || coalesce(a.deleted_at::text, 'null') || ']' FROM apis a WHERE a.key_space_id = k.key_space_id LIMIT 1) AS api,
  (SELECT ${jsonArrayAgg(jsonString("r.name"), "r.name")} FROM key_roles kr JOIN roles r ON r.id = kr.role_id WHERE kr.key_id = k.id) AS roles,
  (SELECT ${jsonArrayAgg(jsonString("held.slug"), "held.slug")} FROM (
      SELECT p.slug FROM key_permissions kp JOIN permissions p ON p.id = kp.permission_id WHERE kp.key_id = k.id
      UNION
      SELECT p.slug FROM key_roles kr JOIN role_permissions rp ON rp.role_id = kr.role_id JOIN permissions p ON p.id = rp.permission_id WHERE kr.key_id = k.id
    ) held) AS permissions,
  (SELECT '{"id":' || ${jsonString("i.id")} || ',"externalId":' || ${jsonString("i.external_id")} || ',"ratelimits":' || ${limitsOf("identity_id", "i.id")} || '}'
    FROM identities i WHERE i.id = k.identity_id AND i.deleted_at IS NULL) AS identity,
  (SELECT i.meta FROM identities i WHERE i.id = k.identity_id AND i.deleted_at IS NULL) AS identity_meta,
  ${limitsOf("key_id", "k.id")} AS ratelimits
FROM keys k
WHERE k.hash = $1`;

/** Loads key snapshots by hash from PostgreSQL with one statement, prepared by Bun's client on each connection of the pool. */
export class PgSnapshotLoader {
  private readonly shared: SharedValues;

  /**
   * `sql` is the caller's pool (closed by it); `sharedValueBytes` bounds the values kept for sharing
   * between snapshots; a load waits `timeoutMs` for PostgreSQL, then rejects with StoreUnreachable.
   */
  constructor(private readonly sql: SQL, sharedValueBytes: number, private readonly timeoutMs = DEFAULT_DATABASE_TIMEOUT_MS) {
    this.shared = new SharedValues(sharedValueBytes);
  }

  /** The snapshot of the key with this hash, or undefined when no key has it; `remaining` is PostgreSQL's balance. */
  async load(hash: string): Promise<KeySnapshot | undefined> {
    const [row] = await withinPg(this.sql.unsafe<SnapshotRow[]>(PG_SNAPSHOT_SQL, [hash]), this.timeoutMs);
    if (row === undefined) return undefined;
    // A long list (thousands of names) is indexed over several turns, as SQLite's slices are (many-permissions.ts).
    const many = row.permissions !== null && row.permissions.length >= SLICED_INDEX_MIN_CHARS ? await permissionSetInSlices(row.permissions) : undefined;
    return toSnapshot(row, this.shared, many);
  }
}
