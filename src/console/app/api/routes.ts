/**
 * The v2 operations the console calls, with the request body and the `data` each answers, as the
 * wire carries them. Written out here rather than imported from the server, so the browser bundle
 * pulls in no server module; the key's shape alone is shared, from the types-only lib/key-view.ts.
 */
import type { KeyView, RatelimitView } from "../../../lib/key-view.ts";

export type { KeyView, RatelimitView };

/** A rate limit as an identity's create and update take it. */
export interface RatelimitInput { name: string; limit: number; duration: number; autoApply?: boolean }

export interface Whoami {
  rootKeyId: string;
  name: string;
  workspace: { id: string; name: string };
  permissions: string[];
  analytics: { recording: boolean; querying: boolean };
  quotas: QuotaUse[];
}

/** One workspace quota's use (storage in bytes). */
export interface QuotaUse {
  quota: "keys" | "identities" | "permissions" | "roles" | "namespaces" | "storage";
  variable: string;
  used: number;
  limit: number;
}

export interface ApiView { id: string; name: string }
/** An API as apis.listApis answers it: keySpaceId is its keys' `key_space_id` in analytics. */
export interface ApiListItem extends ApiView { keySpaceId: string }

/** createdAt: Unix ms. */
export interface NamespaceView { id: string; name: string; createdAt: number }
export interface OverrideView { overrideId: string; identifier: string; limit: number; duration: number }
export interface LimitAnswer { success: boolean; limit: number; remaining: number; reset: number; overrideId?: string }
export interface IdentityView { id: string; externalId: string; meta: Record<string, unknown>; ratelimits: RatelimitView[] }
export interface PermissionView { id: string; name: string; slug: string; description?: string }
export interface RoleView { id: string; name: string; description?: string; permissions?: PermissionView[] }
export interface AuditEntry {
  logId: string;
  time: number;
  event: string;
  actor: { type: string; id: string; name?: string };
  resources: Array<{ type: string; id: string; name?: string }>;
  description: string;
  remoteIp?: string;
  userAgent?: string;
}

type Empty = Record<string, never>;
type ListBody = { limit?: number; cursor?: string; search?: string };

/** Path (after /v2/) → request body and response data. Pages add the operations they call. */
export interface Routes {
  "rootKeys.whoami": { body: Empty; data: Whoami };
  "apis.listApis": { body: { limit?: number; cursor?: string; search?: string }; data: ApiListItem[] };
  "apis.getApi": { body: { apiId: string }; data: ApiView };
  "apis.createApi": { body: { name: string }; data: { apiId: string } };
  "apis.deleteApi": { body: { apiId: string }; data: Empty };
  "apis.listKeys": { body: { apiId: string; limit?: number; cursor?: string; externalId?: string }; data: KeyView[] };
  "keys.getKey": { body: { keyId: string }; data: KeyView };
  "keys.createKey": {
    body: { apiId: string; name?: string; prefix?: string; externalId?: string; expires?: number; credits?: { remaining: number | null }; enabled?: boolean };
    data: { keyId: string; key: string };
  };
  "keys.updateKey": { body: { keyId: string; enabled?: boolean; name?: string | null; expires?: number | null }; data: Empty };
  "keys.updateCredits": { body: { keyId: string; operation: "set" | "increment" | "decrement"; value?: number | null }; data: { remaining: number | null } };
  "keys.deleteKey": { body: { keyId: string }; data: Empty };
  "keys.rerollKey": { body: { keyId: string; expiration: number }; data: { keyId: string; key: string } };
  "keys.addPermissions": { body: { keyId: string; permissions: string[] }; data: unknown };
  "keys.removePermissions": { body: { keyId: string; permissions: string[] }; data: unknown };
  "keys.addRoles": { body: { keyId: string; roles: string[] }; data: unknown };
  "keys.removeRoles": { body: { keyId: string; roles: string[] }; data: unknown };
  "analytics.getVerifications": { body: { query: string }; data: Array<Record<string, unknown>> };
  "ratelimit.listNamespaces": { body: ListBody; data: NamespaceView[] };
  "ratelimit.listOverrides": { body: { namespace: string; limit?: number; cursor?: string }; data: OverrideView[] };
  "ratelimit.setOverride": { body: { namespace: string; identifier: string; limit: number; duration: number }; data: { overrideId: string } };
  "ratelimit.deleteOverride": { body: { namespace: string; identifier: string }; data: Empty };
  "ratelimit.limit": { body: { namespace: string; identifier: string; limit: number; duration: number; cost?: number }; data: LimitAnswer };
  "ratelimits.limit": { body: { namespace: string; identifier: string; limit: number; duration: number; cost?: number }; data: LimitAnswer };
  "identities.listIdentities": { body: ListBody; data: IdentityView[] };
  "identities.createIdentity": { body: { externalId: string; meta?: Record<string, unknown>; ratelimits?: RatelimitInput[] }; data: { identityId: string } };
  "identities.updateIdentity": { body: { identity: string; meta?: Record<string, unknown>; ratelimits?: RatelimitInput[] }; data: IdentityView };
  "identities.deleteIdentity": { body: { identity: string }; data: Empty };
  "permissions.listPermissions": { body: ListBody; data: PermissionView[] };
  "permissions.createPermission": { body: { name: string; slug: string; description?: string }; data: { permissionId: string } };
  "permissions.deletePermission": { body: { permission: string }; data: Empty };
  "permissions.listRoles": { body: ListBody; data: RoleView[] };
  "permissions.createRole": { body: { name: string; description?: string; permissions?: string[] }; data: { roleId: string } };
  "permissions.setRolePermissions": { body: { role: string; permissions: string[] }; data: unknown };
  "permissions.deleteRole": { body: { role: string }; data: Empty };
  "audit.listLogs": { body: { limit?: number; cursor?: string; event?: string; actorId?: string; resourceId?: string; since?: number; until?: number }; data: AuditEntry[] };
  "audit.getLog": { body: { logId: string }; data: AuditEntry };
}
