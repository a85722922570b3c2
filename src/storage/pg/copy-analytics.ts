/**
 * What copying a data dir's analytics.db into the cluster's `analytics` schema moves, and how
 * each table's rows are read from SQLite, the PostgreSQL columns coming from its drizzle schema:
 *
 * - the raw events, one row each, read through analytics.db's `verification_events` view (which
 *   unpacks the batch rows of both layouts); PostgreSQL numbers them anew (its identity column);
 * - the minute rollup as its table holds it (less `folded`, which PostgreSQL has no use for);
 * - the hour, day and month rollups through their `_all` views, which add the minute rows not
 *   folded yet, summed per primary key (a key may have a folded row and unfolded minutes);
 * - the totals and rate-limit decisions tables as they are.
 *
 * So each public table shows on PostgreSQL the counts it showed on the box.
 */
import { getTableName } from "drizzle-orm";
import { getTableConfig, type PgTable } from "drizzle-orm/pg-core";
import { GRANULARITIES, PG_ANALYTICS, qualifiedName } from "./analytics-tables.ts";
import { quoteIdentifier } from "./db.ts";
import { copiedColumns, type CopiedTable } from "./copy-tables.ts";

/** How a coarser rollup's column is summed over a view's rows of one key: the rest are summed, the key's columns grouped by. */
const NOT_SUMMED: Readonly<Record<string, string>> = { external_id: "max", latency_max_ms: "max" };

/** A copied analytics table: its columns but identities (PostgreSQL numbers the rows), read by `select` over `columns`. */
function analyticsTable(table: PgTable, select: (columns: string[]) => string): CopiedTable {
  const name = getTableName(table);
  const columns = getTableConfig(table).columns.filter((c) => !c.generatedIdentity);
  return {
    name: `analytics.${name}`,
    target: qualifiedName(table),
    columns: copiedColumns(`analytics.${name}`, columns),
    identityColumns: [],
    select: select(columns.map((c) => c.name)),
  };
}

const list = (columns: string[]) => columns.map(quoteIdentifier).join(", ");
const plain = (table: PgTable, from = getTableName(table)) => analyticsTable(table, (columns) => `SELECT ${list(columns)} FROM ${quoteIdentifier(from)}`);

/** A coarser rollup read through its `_all` view, one row per primary key. */
function coarserRollup(table: PgTable): CopiedTable {
  const key = new Set(getTableConfig(table).primaryKeys[0]!.columns.map((c) => c.name));
  return analyticsTable(table, (columns) => {
    const values = columns.map((c) => (key.has(c) ? quoteIdentifier(c) : `${NOT_SUMMED[c] ?? "sum"}(${quoteIdentifier(c)}) AS ${quoteIdentifier(c)}`));
    return `SELECT ${values.join(", ")} FROM ${quoteIdentifier(`${getTableName(table)}_all`)} GROUP BY ${list([...key])}`;
  });
}

/** Every analytics table copied, the raw events first. */
export function planAnalyticsCopy(): CopiedTable[] {
  return [
    plain(PG_ANALYTICS.events, "verification_events"),
    ...GRANULARITIES.map((g) => (g === "minute" ? plain(PG_ANALYTICS.rollups[g]) : coarserRollup(PG_ANALYTICS.rollups[g]))),
    ...GRANULARITIES.map((g) => plain(PG_ANALYTICS.totals[g])),
    ...GRANULARITIES.map((g) => plain(PG_ANALYTICS.decisions[g])),
  ];
}
