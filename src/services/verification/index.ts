/**
 * Key verification: the service's hot path. Always answers with data (`valid`, `code`); only a
 * malformed request is an error. Checks run in upstream's order and the first failure wins:
 * unknown key / other workspace / deleted API / no verify permission → NOT_FOUND (bare);
 * deleted key → NOT_FOUND; disabled → DISABLED; expired → EXPIRED.
 */
import type { Storage } from "../../storage/db.ts";
import type { Clock } from "../../lib/clock.ts";
import { sha256Base64 } from "../../lib/hashing.ts";
import { can, type Principal } from "../auth/index.ts";
import { loadKeySnapshot, type KeySnapshot } from "./snapshot.ts";

export type VerificationCode =
  | "VALID" | "NOT_FOUND" | "FORBIDDEN" | "INSUFFICIENT_PERMISSIONS" | "USAGE_EXCEEDED" | "RATE_LIMITED" | "DISABLED" | "EXPIRED";

export interface VerifyKeyInput {
  key: string;
  tags?: string[];
  permissions?: string;
  credits?: { cost: number };
  ratelimits?: Array<{ name: string; cost?: number; limit?: number; duration?: number }>;
}

export interface VerifyKeyResult {
  valid: boolean;
  code: VerificationCode;
  keyId?: string;
  name?: string;
  meta?: Record<string, unknown>;
  expires?: number;
  credits?: number;
  enabled?: boolean;
  permissions?: string[];
  roles?: string[];
  identity?: { id: string; externalId: string; meta?: Record<string, unknown> };
}

export class VerificationService {
  constructor(private readonly deps: { storage: Storage; clock: Clock }) {}

  verifyKey(principal: Principal, input: VerifyKeyInput): VerifyKeyResult {
    const snap = loadKeySnapshot(this.deps.storage.db, sha256Base64(input.key));
    if (!snap || snap.workspaceId !== principal.workspaceId || snap.apiDeleted || snap.apiId === null) {
      return { valid: false, code: "NOT_FOUND" };
    }
    if (!can(principal, "api", snap.apiId, "verify_key")) return { valid: false, code: "NOT_FOUND" };
    if (snap.deleted) return describe(snap, "NOT_FOUND");
    if (!snap.enabled) return describe(snap, "DISABLED");
    if (snap.expiresAt !== null && snap.expiresAt <= this.deps.clock.now()) return describe(snap, "EXPIRED");
    return describe(snap, "VALID");
  }
}

/** The result for a key that was found: its fields, optional ones only when set. */
function describe(snap: KeySnapshot, code: VerificationCode): VerifyKeyResult {
  const result: VerifyKeyResult = { valid: code === "VALID", code, keyId: snap.keyId };
  if (snap.name !== null) result.name = snap.name;
  if (snap.meta !== null) result.meta = snap.meta;
  if (snap.expiresAt !== null) result.expires = snap.expiresAt;
  if (snap.remaining !== null) result.credits = snap.remaining;
  result.enabled = snap.enabled;
  if (snap.permissions.length > 0) result.permissions = snap.permissions;
  if (snap.roles.length > 0) result.roles = snap.roles;
  if (snap.identity) {
    result.identity = {
      id: snap.identity.id,
      externalId: snap.identity.externalId,
      ...(snap.identity.meta && Object.keys(snap.identity.meta).length > 0 ? { meta: snap.identity.meta } : {}),
    };
  }
  return result;
}
