/**
 * Credit changes made by management calls: keys.updateCredits (set / increment / decrement) and the
 * `credits` field of keys.updateKey. `remaining` NULL means unlimited; an unlimited balance clears
 * the refill settings. Verification spends are separate (verification/credits.ts).
 */
import type { CreditChange } from "../../storage/records/index.ts";
import { step, type Maybe } from "../../storage/work.ts";
import { invalidInput } from "../../errors/app-error.ts";
import { requirePermission, type Principal } from "../auth/index.ts";
import type { KeyDeps } from "./create.ts";
import { creditsView, type KeyRow } from "./view.ts";
import { mutateKey } from "./target.ts";
import type { KeyView, RefillInput } from "./types.ts";

/** The `credits` field of keys.updateKey: every part three-state (left out, null, value). */
export interface UpdateKeyCreditsInput {
  remaining?: number | null;
  refill?: RefillInput | null;
}

export interface UpdateCreditsInput {
  keyId: string;
  operation: "set" | "increment" | "decrement";
  value?: number | null;
}

export type CreditsView = NonNullable<KeyView["credits"]>;

type CreditColumns = Partial<Pick<KeyRow, "remaining" | "refillAmount" | "refillDay" | "lastRefillAt">>;

const UNLIMITED = { remaining: null, refillAmount: null, refillDay: null } as const;

/**
 * The key columns a `credits` value of keys.updateKey sets: null → unlimited without refill;
 * `remaining: null` → the same; `refill: null` → no refill. 400 for a monthly refill without
 * `refillDay` or a daily one with it, and for a refill on a key that would stay unlimited (as at
 * creation: the nightly refill would otherwise turn an unlimited key into a limited one).
 */
export function creditsPatch(credits: UpdateKeyCreditsInput | null | undefined, row: KeyRow, nowMs: number): CreditColumns {
  if (credits === undefined) return {};
  if (credits === null) return { ...UNLIMITED };
  const patch: CreditColumns = {};
  if (credits.remaining === null) Object.assign(patch, UNLIMITED);
  else if (credits.remaining !== undefined) patch.remaining = credits.remaining;
  if (credits.refill === null) Object.assign(patch, { refillAmount: null, refillDay: null });
  else if (credits.refill !== undefined) {
    const refill = refillPatch(credits.refill, row, nowMs);
    const remaining = patch.remaining !== undefined ? patch.remaining : row.remaining;
    if (remaining === null) {
      throw invalidInput("body.credits.remaining", "`credits.remaining` must be provided when `credits.refill` is set.");
    }
    Object.assign(patch, refill);
  }
  return patch;
}

function refillPatch(refill: RefillInput, row: KeyRow, nowMs: number): CreditColumns {
  if (refill.interval === "monthly" && refill.refillDay === undefined) {
    throw invalidInput("body.credits.refill.refillDay", "`refillDay` must be provided when the refill interval is `monthly`.");
  }
  if (refill.interval === "daily" && refill.refillDay !== undefined) {
    throw invalidInput("body.credits.refill.refillDay", "`refillDay` must not be provided when the refill interval is `daily`.");
  }
  // A newly configured refill counts from now, so the start-up catch-up does not refill it at once.
  const since = row.refillAmount === null ? { lastRefillAt: nowMs } : {};
  return { refillAmount: refill.amount, refillDay: refill.refillDay ?? null, ...since };
}

/** Keeps an increment within the integers a JSON number holds exactly. */
const MAX_CREDITS = Number.MAX_SAFE_INTEGER;

function creditChange(input: UpdateCreditsInput, row: KeyRow): CreditChange {
  const { operation, value } = input;
  if (operation === "set") return { set: value === null || value === undefined ? { ...UNLIMITED } : { remaining: value } };
  if (value === null || value === undefined) {
    throw invalidInput("body.value", "When specifying an increment or decrement operation, a value must be provided.");
  }
  if (row.remaining === null) {
    throw invalidInput("body.operation", "You cannot increment or decrement a key with unlimited credits.");
  }
  return operation === "increment" ? { increment: value, max: MAX_CREDITS } : { decrement: value };
}

/**
 * keys.updateCredits: `set` N (refill kept) or null (unlimited, refill cleared); `increment` /
 * `decrement` N (decrement stops at 0). Needs `update_key` on the key's API. Returns the credits after the change.
 */
export function updateCredits(deps: KeyDeps, principal: Principal, input: UpdateCreditsInput): Maybe<CreditsView> {
  return mutateKey(deps, principal, input.keyId, {
    event: "key.update_credits",
    *authorize(t) {
      requirePermission(principal, "api", t.api.id, "update_key");
    },
    *apply(t, _now, r) {
      const after = yield* step(r.keys.changeCredits(t.row.id, creditChange(input, t.row)));
      return (after && creditsView(after)) ?? { remaining: null };
    },
    describe: (t, credits) => `Updated credits of key ${t.row.id} (${input.operation}): remaining ${credits.remaining ?? "unlimited"}`,
  });
}
