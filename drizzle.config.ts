import { defineConfig } from "drizzle-kit";

/** tollgate.db: every table but the analytics ones, which have their own file (drizzle.analytics.config.ts). */
export default defineConfig({
  dialect: "sqlite",
  schema: ["workspaces", "apis", "keys", "rbac", "ratelimits", "audit", "credits"].map((name) => `./src/storage/schema/${name}.ts`),
  out: "./migrations",
});
