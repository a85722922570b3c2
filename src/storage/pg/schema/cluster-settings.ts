/**
 * The cluster's own settings, one row a name, with no SQLite twin (a box has no cluster to
 * identify): today the fingerprint of the master key every node must hold
 * (storage/pg/cluster-settings.ts). A table of named rows rather than one wide row, so that a later
 * setting is a row, not a migration.
 */
import { pgTable, text } from "drizzle-orm/pg-core";
import { int8 } from "./columns.ts";

export const clusterSettings = pgTable("cluster_settings", {
  name: text("name").primaryKey(),
  value: text("value").notNull(),
  setAtMs: int8("set_at_ms").notNull(),
});
