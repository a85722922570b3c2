/** Builds the KeyView of a stored key: the row plus its access, identity and limits. */
import type { KeyRecord, Records } from "../../storage/records/index.ts";
import { step, type Work } from "../../storage/work.ts";
import { loadKeyAccessIn } from "../rbac/index.ts";
import type { KeyView } from "./types.ts";
import type { CreditBalances } from "../credits/index.ts";

export type KeyRow = KeyRecord;

/** Leaves out every optional field that is empty, as upstream does. */
export function* keyViewIn(records: Records, row: KeyRow, credits: Pick<CreditBalances, "pendingOf">): Work<KeyView> {
  const view: KeyView = { keyId: row.id, start: row.start, enabled: row.enabled, createdAt: row.createdAt };
  if (row.name !== null) view.name = row.name;
  if (row.meta !== null) view.meta = row.meta;
  if (row.updatedAt !== null) view.updatedAt = row.updatedAt;
  if (row.lastUsedAt !== null) view.lastUsedAt = row.lastUsedAt;
  if (row.expiresAt !== null) view.expires = row.expiresAt;
  const access = yield* loadKeyAccessIn(records, row.id);
  if (access.permissions.length > 0) view.permissions = access.permissions;
  if (access.roles.length > 0) view.roles = access.roles;
  const balance = creditsView(row.remaining === null ? row : { ...row, remaining: row.remaining - credits.pendingOf(row.id) });
  if (balance) view.credits = balance;
  const identity = row.identityId ? yield* step(records.identities.findById(row.identityId)) : undefined;
  if (identity) {
    const limits = yield* step(records.limits.load({ identityId: identity.id }));
    view.identity = {
      id: identity.id,
      externalId: identity.externalId,
      ...(identity.meta && Object.keys(identity.meta).length > 0 ? { meta: identity.meta } : {}),
      ...(limits.length > 0 ? { ratelimits: limits } : {}),
    };
  }
  const limits = yield* step(records.limits.load({ keyId: row.id }));
  if (limits.length > 0) view.ratelimits = limits;
  return view;
}

/** Credits as shown to clients; undefined for an unlimited key without refill. */
export function creditsView(row: Pick<KeyRow, "remaining" | "refillAmount" | "refillDay">): KeyView["credits"] {
  if (row.remaining === null && row.refillAmount === null) return undefined;
  const credits: NonNullable<KeyView["credits"]> = { remaining: row.remaining };
  if (row.refillAmount !== null) {
    credits.refill = row.refillDay !== null
      ? { interval: "monthly", amount: row.refillAmount, refillDay: row.refillDay }
      : { interval: "daily", amount: row.refillAmount };
  }
  return credits;
}
