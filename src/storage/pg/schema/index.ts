/**
 * The PostgreSQL schema of tollgate's main database, table for table the SQLite one of
 * storage/schema (its analytics tables excepted), and the cluster mode's own tables (cluster.ts);
 * test/storage/pg-schema-parity.test.ts holds the two together.
 */
export * from "./workspaces.ts";
export * from "./apis.ts";
export * from "./keys.ts";
export * from "./rbac.ts";
export * from "./ratelimits.ts";
export * from "./audit.ts";
export * from "./credits.ts";
export * from "./cluster.ts";
export * from "./credit-spends.ts";
export * from "./cluster-settings.ts";
export * from "./analytics.ts";
