import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * The write-ahead journal of credit spends (services/credits). A key's balance is `keys.remaining`
 * minus the sum of its amounts here: each verification's spend is appended in a group commit, which
 * writes one row instead of one random page of `keys`. Rows are compacted into per-key totals from
 * time to time, and a key's total is folded into `keys.remaining` before anything else writes it.
 */
export const creditJournal = sqliteTable("credit_journal", {
  id: integer("id").primaryKey(),
  /** JSON `[[keyId, amount], ...]`; a negative amount records a fold into `keys.remaining`. */
  entries: text("entries").notNull(),
});
