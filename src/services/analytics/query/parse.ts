/**
 * Parsing with sqlparser-rs (Apache DataFusion's SQL parser, compiled to WASM) in its ClickHouse
 * dialect: the dialect upstream's analytics queries are written in. The parser only reads; every
 * decision about what is allowed is made on its AST by guard-*.ts.
 */
import { ClickHouseDialect, Parser, init } from "@guanmingchiu/sqlparser-ts";
import { AppError } from "../../../errors/app-error.ts";

/** Upstream's limit on the query text, in UTF-8 bytes. */
export const MAX_QUERY_BYTES = 16 * 1024;

/** Nesting the parser accepts before refusing with "recursion limit exceeded". */
const PARSER_RECURSION_LIMIT = 50;

/**
 * The WASM parser trapped (its stack overflowed on a very long operator chain) and its instance
 * can no longer be trusted: the query process that owns it must be replaced.
 */
export class ParserBrokenError extends Error {
  constructor(cause: unknown) {
    super("the SQL parser instance is broken", { cause });
    this.name = "ParserBrokenError";
  }
}

/** Loads the parser's WASM module; once per thread, before the first parse. */
export async function initSqlParser(): Promise<void> {
  await init();
}

/** Throws 400 `invalid_analytics_query` when the query is longer than upstream allows. */
export function assertQuerySize(sql: string): void {
  if (Buffer.byteLength(sql, "utf8") > MAX_QUERY_BYTES) {
    throw new AppError("invalid_analytics_query", { detail: `Analytics query exceeds the maximum length of ${MAX_QUERY_BYTES} bytes.` });
  }
}

/**
 * Parses exactly one statement and returns its `Query` node (still the parser's JSON). Throws 400
 * `invalid_analytics_query` for syntax errors, 400 `invalid_analytics_query_type` for anything but
 * one SELECT, and ParserBrokenError when the parser itself failed.
 */
export function parseSingleSelect(sql: string): unknown {
  assertQuerySize(sql);
  const statements = parseAll(sql);
  if (statements.length === 0) throw new AppError("invalid_analytics_query", { detail: "The query is empty." });
  if (statements.length > 1) {
    throw new AppError("invalid_analytics_query_type", { detail: "Only one SELECT statement is allowed; remove the other statements." });
  }
  const statement = statements[0] as Record<string, unknown>;
  if (!("Query" in statement)) throw new AppError("invalid_analytics_query_type", { detail: "Only SELECT queries are allowed." });
  return statement.Query;
}

function parseAll(sql: string): unknown[] {
  const parser = new Parser(new ClickHouseDialect()).withRecursionLimit(PARSER_RECURSION_LIMIT);
  try {
    return parser.parse(sql) as unknown[];
  } catch (error) {
    // Syntax errors and traps arrive as the same error class; a trap leaves the instance unable
    // to parse even a trivial query, which is how the two are told apart.
    if (!canStillParse(parser)) throw new ParserBrokenError(error);
    const message = error instanceof Error ? error.message.replace(/^sql parser error:\s*/, "") : String(error);
    throw new AppError("invalid_analytics_query", { detail: `Invalid SQL syntax: ${message}` });
  }
}

function canStillParse(parser: Parser): boolean {
  try {
    parser.parse("SELECT 1");
    return true;
  } catch {
    return false;
  }
}

/** The detail shown when the parser broke on a query: it is the query's shape, not a server fault. */
export const TOO_COMPLEX_DETAIL = "The query is too complex to parse: split very long chains of operators (for example thousands of '+' or 'OR') into smaller expressions.";
