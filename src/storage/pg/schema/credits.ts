/**
 * PostgreSQL twin of storage/schema/credits.ts: the write-ahead journal of credit spends. `id` is
 * an identity where SQLite's is the rowid alias: an insert without it gets the next number.
 */
import { pgTable, text } from "drizzle-orm/pg-core";
import { int8 } from "./columns.ts";

export const creditJournal = pgTable("credit_journal", {
  id: int8("id").primaryKey().generatedByDefaultAsIdentity(),
  /** JSON `[[keyId, amount], ...]`; a negative amount records a fold into `keys.remaining`. */
  entries: text("entries").notNull(),
});
