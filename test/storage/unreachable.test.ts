/**
 * unreachableStore: which errors of Bun's PostgreSQL and Redis clients say the server is
 * unreachable (by code and SQLSTATE, through drizzle's and callers' wrapping), and which do not.
 */
import { describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { DrizzleQueryError } from "drizzle-orm/errors";
import { StoreUnreachable, unreachableStore } from "../../src/storage/unreachable.ts";

/** An error as Bun's clients make them; `errno` "" for none. */
const clientError = (code: string, errno = "") => Object.assign(new Error("m"), { code, ...(errno === "" ? {} : { errno }) });

describe("unreachable", () => {
  test.each([
    ["ERR_POSTGRES_CONNECTION_REFUSED"], ["ERR_POSTGRES_CONNECTION_CLOSED"], ["ERR_POSTGRES_CONNECTION_FAILED"], ["ERR_POSTGRES_CONNECTION_TIMEOUT"],
  ])("PostgreSQL: %s", (code) => {
    expect(unreachableStore(clientError(code))).toEqual({ store: "PostgreSQL", code });
  });

  test.each([["57P01"], ["57P02"], ["57P03"], ["53300"]])("PostgreSQL: the server's %s", (state) => {
    expect(unreachableStore(clientError("ERR_POSTGRES_SERVER_ERROR", state))).toEqual({ store: "PostgreSQL", code: state });
  });

  test.each([["ERR_REDIS_CONNECTION_CLOSED"], ["ERR_REDIS_CONNECTION_TIMEOUT"]])("Redis: %s", (code) => {
    expect(unreachableStore(clientError(code))).toEqual({ store: "Redis", code });
  });

  test("found through drizzle's wrapping and a caller's cause", () => {
    const wrapped = new Error("outer", { cause: new DrizzleQueryError("SELECT 1", [], clientError("ERR_POSTGRES_CONNECTION_CLOSED") as Error) });
    expect(unreachableStore(wrapped)?.store).toBe("PostgreSQL");
  });

  test("a store adapter's own StoreUnreachable", () => {
    expect(unreachableStore(new StoreUnreachable("Redis", "no answer in time"))).toEqual({ store: "Redis", code: "StoreUnreachable" });
  });

  test("the real client's refusal", async () => {
    const sql = new SQL("postgres://nobody:pw@127.0.0.1:1/x", { max: 1 });
    const error = await sql`SELECT 1`.catch((e: unknown) => e);
    expect(unreachableStore(error)?.store).toBe("PostgreSQL");
    await sql.close();
  });
});

describe("not unreachable", () => {
  test.each([
    ["ERR_POSTGRES_SERVER_ERROR", "23505"], ["ERR_POSTGRES_SERVER_ERROR", "57014"], ["ERR_POSTGRES_SYNTAX_ERROR", "42601"],
    ["ERR_REDIS_SERVER_ERROR", ""], ["SQLITE_BUSY", ""],
  ])("%s %s", (code, errno) => {
    expect(unreachableStore(clientError(code, errno))).toBeUndefined();
  });

  test("anything without a code", () => {
    for (const error of [new Error("connection refused"), "text", undefined, null, 42]) expect(unreachableStore(error)).toBeUndefined();
  });
});
