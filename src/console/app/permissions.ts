/**
 * What the signed-in root key may do, so the console shows only the actions the API would accept.
 * It matches with the server's own matcher (src/lib/grants.ts); the API still decides every call.
 */
import { grantsAllow, normaliseGrants } from "../../lib/grants.ts";

/** One root-key permission: `<resource>.<id>.<action>`, id `*` for "any". */
export interface Action {
  resource: "api" | "ratelimit" | "rbac" | "identity" | "audit";
  action: string;
  id?: string;
}

export type Grants = ReadonlySet<string>;

export function grantsOf(permissions: readonly string[]): Grants {
  return normaliseGrants(permissions);
}

/** Whether the grants allow `action` on its id (`*` when none is given). */
export function allows(grants: Grants, action: Action): boolean {
  return grantsAllow(grants, action.resource, action.id ?? "*", action.action);
}

/** Whether the grants allow every one of `actions` (a write that needs several permissions). */
export function allowsAll(grants: Grants, actions: readonly Action[]): boolean {
  return actions.every((a) => allows(grants, a));
}

/** Whether the grants allow `action` on at least one id: a list page shows what it may of what exists. */
export function allowsSome(grants: Grants, resource: Action["resource"], action: string): boolean {
  const aliases = resource === "api" ? ["api.", "apis."] : [`${resource}.`];
  return [...grants].some((g) => aliases.some((a) => g.startsWith(a)) && g.endsWith(`.${action}`) && g.split(".").length === 3);
}
