export * from "./workspaces.ts";
export * from "./apis.ts";
export * from "./keys.ts";
export * from "./rbac.ts";
export * from "./ratelimits.ts";
export * from "./audit.ts";
export * from "./analytics.ts";
export * from "./credits.ts";
