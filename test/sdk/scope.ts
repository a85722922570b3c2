/**
 * Which parts of the official SDK (`@unkey/api` 2.5) tollgate serves, read from the SDK's own
 * client objects, so that a method added to the SDK (or one we forgot) shows up as unclassified.
 */
import { Unkey } from "@unkey/api";

/** The groups tollgate serves (the scope: apis, keys, ratelimit, permissions, identities, analytics). */
export const IN_SCOPE_GROUPS = ["analytics", "apis", "identities", "keys", "permissions", "ratelimit"] as const;
export type InScopeGroup = (typeof IN_SCOPE_GROUPS)[number];

/** Whole SDK groups for Unkey's hosted deploy platform and portal, which a key service does not have. */
export const OUT_OF_SCOPE_GROUPS: Record<string, string> = {
  apps: "Unkey Deploy applications: hosting, not API keys",
  deployments: "Unkey Deploy deployments: hosting",
  domains: "Unkey Deploy custom domains: hosting",
  environments: "Unkey Deploy environments and their variables: hosting",
  gateway: "Unkey's hosted gateway policies: tollgate is not a gateway",
  github: "GitHub app installation for Unkey Deploy",
  internal: "Unkey-internal deploy endpoints",
  portal: "Unkey's hosted customer portal sessions",
  projects: "Unkey Deploy projects: hosting",
};

/** Methods of in-scope groups that tollgate does not serve, and why. */
export const OUT_OF_SCOPE_METHODS: Record<string, string> = {
  "analytics.getGatewayRequests": "analytics of Unkey's hosted gateway, which tollgate does not have",
  "analytics.getRatelimits": "upstream's hosted rate-limit analytics; tollgate records verifications only (DECISIONS: Analytics)",
  "analytics.getRuntimeLogs": "logs of Unkey Deploy runtimes",
  "keys.migrateKeys": "imports keys through an upstream migration provider, which tollgate does not have (its 404 is in errors.test.ts)",
};

/** Every group of the SDK client and the methods on its prototype. */
export function sdkSurface(): Map<string, string[]> {
  const sdk = new Unkey({ rootKey: "x", serverURL: "http://127.0.0.1:1" });
  const surface = new Map<string, string[]>();
  for (const group of Object.getOwnPropertyNames(Object.getPrototypeOf(sdk))) {
    const value = (sdk as unknown as Record<string, unknown>)[group];
    if (group === "constructor" || value === null || typeof value !== "object") continue;
    surface.set(group, Object.getOwnPropertyNames(Object.getPrototypeOf(value)).filter((m) => m !== "constructor").sort());
  }
  return surface;
}

/** The in-scope methods of `group` that tollgate serves. */
export function servedMethods(group: InScopeGroup): string[] {
  return (sdkSurface().get(group) ?? []).filter((m) => !(`${group}.${m}` in OUT_OF_SCOPE_METHODS));
}
