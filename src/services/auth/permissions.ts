/**
 * Root-key permission checks. Grants are `<resource>.<id>.<action>` strings matched by lib/grants.ts
 * (shared with the console, which hides what the server would refuse).
 */
import { AppError } from "../../errors/app-error.ts";
import type { Principal } from "./principal.ts";
import { grantsAllow } from "../../lib/grants.ts";

export { normaliseGrants } from "../../lib/grants.ts";

/** Whether the principal holds `<resource>.<id>.<action>`, directly or through `<resource>.*.<action>`. */
export function can(principal: Principal, resource: string, id: string, action: string): boolean {
  return grantsAllow(principal.permissions, resource, id, action);
}

/**
 * The 403 naming what the principal lacks, in upstream's words: one grant is `Missing permission:
 * '<grant>'`; a choice of grants (the wildcard or the record's own) lists them and, as upstream
 * does, the grants the root key holds: they are its holder's own, so nothing leaks.
 */
export function missingPermissions(principal: Principal, grants: readonly string[]): AppError {
  const quoted = (list: Iterable<string>) => [...list].map((g) => `'${g}'`).join(", ");
  const detail = grants.length === 1
    ? `Missing permission: '${grants[0]}'`
    : `Missing one of these permissions: [${quoted(grants)}], have: [${quoted(principal.permissions)}]`;
  return new AppError("insufficient_permissions", { detail });
}

/** Throws 403 `insufficient_permissions` naming the permission (or the two that would do) unless `can(...)`. */
export function requirePermission(principal: Principal, resource: string, id: string, action: string): void {
  if (!can(principal, resource, id, action)) {
    const wildcard = `${resource}.*.${action}`;
    throw missingPermissions(principal, id === "*" ? [wildcard] : [wildcard, `${resource}.${id}.${action}`]);
  }
}

/**
 * Which `<resource>` records the principal may `action`: null for all (`<resource>.*.<action>`),
 * else the ids granted one by one, undefined when there are none.
 */
export function grantedIds(principal: Principal, resource: string, action: string): string[] | null | undefined {
  if (can(principal, resource, "*", action)) return null;
  const prefix = `${resource}.`;
  const suffix = `.${action}`;
  const ids = [...principal.permissions].flatMap((g) => {
    if (!g.startsWith(prefix) || !g.endsWith(suffix)) return [];
    const id = g.slice(prefix.length, g.length - suffix.length);
    return id === "" || /[.*]/.test(id) ? [] : [id];
  });
  return ids.length === 0 ? undefined : ids;
}

/**
 * grantedIds for a listing that shows a key scoped to some records just those; 403 naming the
 * wildcard when there are none.
 */
export function permittedIds(principal: Principal, resource: string, action: string): string[] | null {
  const ids = grantedIds(principal, resource, action);
  if (ids !== undefined) return ids;
  // Throws: without the wildcard (grantedIds looked) this is a 403.
  requirePermission(principal, resource, "*", action);
  return [];
}

/** Whether a permission string is well formed for a root key. */
export function isValidGrant(grant: string): boolean {
  return /^[a-z_]+\.[A-Za-z0-9_*-]+\.[a-z_]+$/.test(grant);
}

/** Every grant a bootstrap root key holds: all actions on every resource. */
export const ALL_GRANTS: readonly string[] = [
  ...["read_api", "create_api", "delete_api", "update_api", "create_key", "update_key", "delete_key", "encrypt_key", "decrypt_key", "read_key", "verify_key", "read_analytics"].map((a) => `api.*.${a}`),
  ...["limit", "read_analytics", "create_namespace", "read_namespace", "update_namespace", "delete_namespace", "set_override", "read_override", "delete_override"].map((a) => `ratelimit.*.${a}`),
  ...["create_permission", "update_permission", "delete_permission", "read_permission", "create_role", "update_role", "delete_role", "read_role", "add_permission_to_key", "remove_permission_from_key", "add_role_to_key", "remove_role_from_key", "add_permission_to_role", "remove_permission_from_role"].map((a) => `rbac.*.${a}`),
  ...["create_identity", "read_identity", "update_identity", "delete_identity"].map((a) => `identity.*.${a}`),
  "audit.*.read_log",
];
