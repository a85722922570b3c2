export * from "./workspaces.ts";
export * from "./apis.ts";
export * from "./keys.ts";
export * from "./rbac.ts";
export * from "./ratelimits.ts";
export * from "./events.ts";
export * from "./credits.ts";
