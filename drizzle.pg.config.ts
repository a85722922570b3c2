import { defineConfig } from "drizzle-kit";

/** The main database on PostgreSQL (cluster mode): the pg-core twin of drizzle.config.ts's tables. */
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/storage/pg/schema/index.ts",
  out: "./migrations/pg",
});
