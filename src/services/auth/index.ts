/**
 * Root-key authentication: `Authorization: Bearer <root key>` → Principal. Every request reads the
 * root key's row (an indexed lookup by hash) so a revocation made by the CLI in another process
 * takes effect on the very next request.
 */
import { eq } from "drizzle-orm";
import type { Storage } from "../../storage/db.ts";
import { rootKeys, workspaces } from "../../storage/schema/index.ts";
import type { Clock } from "../../lib/clock.ts";
import { sha256Base64 } from "../../lib/hashing.ts";
import { AppError } from "../../errors/app-error.ts";
import { normaliseGrants } from "./permissions.ts";
import type { Principal } from "./principal.ts";

export type { Actor, Principal } from "./principal.ts";
export { can, requirePermission, ALL_GRANTS, isValidGrant } from "./permissions.ts";

export interface RequestOrigin {
  remoteIp?: string;
  userAgent?: string;
}

export class RootKeyAuthenticator {
  constructor(private readonly deps: { storage: Storage; clock: Clock }) {}

  /** 400 missing/malformed header, 401 unknown or revoked key, 403 disabled or expired key or workspace. */
  authenticate(authorization: string | null | undefined, origin: RequestOrigin = {}): Principal {
    const token = parseBearer(authorization);
    const row = this.deps.storage.db
      .select({
        id: rootKeys.id, name: rootKeys.name, workspaceId: rootKeys.workspaceId, permissions: rootKeys.permissions,
        enabled: rootKeys.enabled, expiresAt: rootKeys.expiresAt, revokedAt: rootKeys.revokedAt, workspaceEnabled: workspaces.enabled,
      })
      .from(rootKeys).innerJoin(workspaces, eq(workspaces.id, rootKeys.workspaceId))
      .where(eq(rootKeys.hash, sha256Base64(token))).get();
    if (!row || row.revokedAt !== null) {
      throw new AppError("root_key_not_found", { detail: "The provided root key is invalid. We could not find the requested key." });
    }
    if (!row.enabled) throw new AppError("key_disabled", { detail: "The root key is disabled." });
    if (row.expiresAt !== null && row.expiresAt <= this.deps.clock.now()) {
      throw new AppError("forbidden", { detail: "The root key has expired." });
    }
    if (!row.workspaceEnabled) throw new AppError("workspace_disabled", { detail: "The workspace of this root key is disabled." });
    return {
      workspaceId: row.workspaceId,
      rootKeyId: row.id,
      permissions: normaliseGrants(row.permissions),
      actor: { type: "root_key", id: row.id, name: row.name, ...origin },
    };
  }
}

function parseBearer(authorization: string | null | undefined): string {
  if (authorization === null || authorization === undefined || authorization.trim() === "") {
    throw new AppError("authentication_missing", {
      detail: "The Authorization header is missing. Send 'Authorization: Bearer <root key>'.",
    });
  }
  const match = /^Bearer\s+(\S+)\s*$/.exec(authorization.trim() + " ");
  if (!match?.[1]) {
    throw new AppError("authentication_malformed", {
      detail: "You must provide a valid root key in the Authorization header in the format 'Bearer ROOT_KEY'.",
    });
  }
  return match[1];
}
