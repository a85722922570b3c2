import { defineConfig } from "drizzle-kit";

/** The analytics database (analytics.db): its tables and their migrations, apart from tollgate.db's. */
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/storage/schema/analytics.ts",
  out: "./migrations/analytics",
});
