/**
 * Column builders the PostgreSQL schema shares. Times in ms and counts are int8 read as JS numbers
 * (Bun's client returns int8 as strings). JSON is kept as `text`, not `jsonb`: drizzle's jsonb
 * double-encodes on bun-sql, and text keeps the values and the JS types the SQLite schema gives.
 */
import { bigint, customType } from "drizzle-orm/pg-core";

/** An int8 column read and written as a JS number: Unix ms, durations in ms, counts and balances. */
export const int8 = (name: string) => bigint(name, { mode: "number" });

/** A JSON value stored as its text, like SQLite's `text(…, { mode: "json" })`. */
export const jsonText = <T>(name: string) =>
  customType<{ data: T; driverData: string }>({
    dataType: () => "text",
    toDriver: (value) => JSON.stringify(value),
    fromDriver: (text) => JSON.parse(text) as T,
  })(name);
