/**
 * The cluster mode's journal of credit-spend statements (services/credits/pg-spender.ts), with no
 * SQLite twin (a box answers a spend only after its own commit, so its fate is never unknown).
 * Each statement that takes credits inserts its row, id chosen by the node, in its own
 * transaction: a statement the node gave up on is then settled by that id, either cancelled (the
 * node inserts the id first, so the statement, should it still run, fails on the key and takes
 * nothing) or refunded (its row is there: its charges are given back once).
 */
import { index, pgTable, text, timestamp } from "drizzle-orm/pg-core";

export const creditSpends = pgTable("credit_spends", {
  id: text("id").primaryKey(),
  /** JSON object: key id → credits the statement took from it. `{}` for a cancelled id. */
  charges: text("charges").notNull(),
  /** `charged` (answered, or not settled yet), `refunded` (given back), `cancelled` (never to be charged). */
  state: text("state").notNull().default("charged"),
  /** Rows are pruned a day on: a statement given up on is settled long before. */
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
}, (t) => [index("credit_spends_created_at_idx").on(t.createdAt)]);
