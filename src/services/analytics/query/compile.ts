/**
 * The whole pipeline for one caller's query: parse (one SELECT) → guard (allow-lists, into our
 * own model) → rewrite (resolve tables, confine, limit) → translate (SQLite or PostgreSQL + parameters).
 * Pure and synchronous once the parser is loaded (initSqlParser).
 */
import { guardQuery } from "./guard-query.ts";
import { parseSingleSelect } from "./parse.ts";
import { rewriteQuery } from "./rewrite.ts";
import { translateQuery, type CompiledQuery, type Confinement } from "./translate.ts";
import { SQLITE, type Dialect } from "./dialect.ts";

export interface CompileOptions {
  confinement: Confinement;
  /** The injected clock's now, Unix ms: what now() and today() mean. */
  nowMs: number;
  maxRows: number;
  /** SQLite (analytics.db) unless given. */
  dialect?: Dialect;
}

/** Throws AppError (400s) for anything outside the supported subset. */
export function compileAnalyticsQuery(sql: string, opts: CompileOptions): CompiledQuery {
  const query = rewriteQuery(guardQuery(parseSingleSelect(sql)), { maxRows: opts.maxRows });
  return translateQuery(query, opts.confinement, opts.nowMs, opts.dialect ?? SQLITE);
}

export { initSqlParser, assertQuerySize, ParserBrokenError, TOO_COMPLEX_DETAIL, MAX_QUERY_BYTES } from "./parse.ts";
export { WATCHDOG_FUNCTION, type CompiledQuery, type Confinement } from "./translate.ts";
export { POSTGRES, SQLITE, type Dialect, type DialectName } from "./dialect.ts";
