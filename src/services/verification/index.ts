/**
 * Key verification: the service's hot path. Always answers with data (`valid`, `code`); only a
 * malformed request (or query, or an unknown named limit) is an error. Checks run in upstream's
 * order (§5.6) and the first failure wins:
 *   unknown key / other workspace / deleted API / no verify permission → NOT_FOUND (bare)
 *   → permission query syntax (400) → deleted key → NOT_FOUND, disabled → DISABLED,
 *   expired → EXPIRED → permission query → INSUFFICIENT_PERMISSIONS → rate limits → RATE_LIMITED
 *   → credits → USAGE_EXCEEDED → VALID.
 */
import { LRUCache } from "lru-cache";
import type { ChangesElsewhere } from "../../storage/external-commits.ts";
import { toMicroseconds, type Clock } from "../../lib/clock.ts";
import { sha256Base64 } from "../../lib/hashing.ts";
import { can, type Actor, type Principal } from "../auth/index.ts";
import type { WindowLimiter } from "../ratelimit/index.ts";
import type { Maybe } from "../../storage/work.ts";
import { markHoldsRawJson, RawJson } from "../../lib/raw-json.ts";
import type { KeySnapshot, Meta } from "./snapshot.ts";
import { evaluatePermissionQuery, parsePermissionQuery, type PermissionQuery } from "./permission-query.ts";
import { applyRatelimits, type RatelimitOutcome, type RatelimitState, type RequestedLimit } from "./ratelimits.ts";
import type { KeyCache } from "../key-cache/index.ts";
import type { VerificationRecorder } from "./events.ts";
import { VerificationCountsByApi } from "./api-counts.ts";
import type { CreditDecision, CreditTaker } from "./credits.ts";

export type { KeySnapshot, Meta } from "./snapshot.ts";
export { SnapshotLoader } from "./snapshot.ts";
export { PgSnapshotLoader } from "./pg-snapshot.ts";
export { LedgerCredits, PostgresCredits, type CreditTaker } from "./credits.ts";
export { OTHER_APIS, VerificationCountsByApi } from "./api-counts.ts";
export type { VerificationEvent, VerificationRecorder } from "./events.ts";

/** Every code a verification answers, with its meaning: the API reference lists them from here. */
export const VERIFICATION_CODES = {
  VALID: "The key is valid: every check passed, and any credits asked for were spent.",
  NOT_FOUND: "No such key in the caller's workspace, its API is deleted, the root key may not verify keys of its API, or the key is deleted.",
  DISABLED: "The key is disabled (`keys.updateKey` with `enabled: false`).",
  EXPIRED: "The key's `expires` time has passed.",
  INSUFFICIENT_PERMISSIONS: "The key does not satisfy the request's `permissions` query.",
  RATE_LIMITED: "A rate limit of the key, its identity or the request is exhausted; nothing was charged.",
  USAGE_EXCEEDED: "The key has fewer credits left than the request's cost; nothing was spent.",
} as const;

export type VerificationCode = keyof typeof VERIFICATION_CODES;

export interface VerifyKeyInput {
  key: string;
  tags?: string[];
  permissions?: string;
  credits?: { cost: number };
  ratelimits?: RequestedLimit[];
}

/** v1's answer: v2's, plus upstream v1's FORBIDDEN for a key of another API than the `apiId` sent. */
export type V1VerifyKeyResult = Omit<VerifyKeyResult, "code"> & { code: VerificationCode | "FORBIDDEN" };

export interface VerifyKeyResult {
  valid: boolean;
  code: VerificationCode;
  keyId?: string;
  name?: string;
  meta?: Meta;
  expires?: number;
  credits?: number;
  enabled?: boolean;
  /** A long list is its JSON text (RawJson), as the snapshot keeps it for answers. */
  permissions?: readonly string[] | RawJson;
  roles?: readonly string[] | RawJson;
  identity?: { id: string; externalId: string; meta?: Meta };
  ratelimits?: RatelimitState[];
}

/** Where a key's snapshot comes from on a cache miss: SQLite at once (SnapshotLoader), PostgreSQL with a promise (PgSnapshotLoader). */
export interface KeySnapshotSource {
  load(hash: string): Maybe<KeySnapshot | undefined>;
}

export interface VerificationDeps {
  clock: Clock;
  snapshots: KeySnapshotSource;
  limiter: WindowLimiter;
  cache: KeyCache<KeySnapshot>;
  credits: CreditTaker;
  /**
   * Looked at before the cache answers: once another process (a CLI command beside `serve`) has
   * committed, the credit ledger is reloaded and the cache dropped (boot.ts), so a key it disabled
   * or deleted does not verify from a stale snapshot.
   */
  changesElsewhere: ChangesElsewhere;
  /** Where each verification's event goes; none when analytics recording is off. */
  events?: VerificationRecorder;
  /** APIs counted by their own id in `countsByApi` (default 1,000). */
  maxApisCounted?: number;
}

const NO_TAGS: readonly string[] = [];

/** The actor of a verification by the key alone (v1): no root key acts. */
const KEY_ITSELF: Actor = Object.freeze({ type: "system", id: "v1_verify_key" });

/** Parsed permission queries by text: callers send the same few queries over and over. */
const QUERY_CACHE_SIZE = 1000;

export class VerificationService {
  private readonly queries = new LRUCache<string, PermissionQuery>({ max: QUERY_CACHE_SIZE });
  /** What v1's verification may do in the key's own workspace (verifyKeyOfItsWorkspace). */
  private readonly verifyEveryKey: ReadonlySet<string> = new Set(["api.*.verify_key"]);
  /** Loads in flight by hash, with the cache's drop count when each began; at most one per request in flight. */
  private readonly loading = new Map<string, { loaded: Promise<KeySnapshot | undefined>; drops: number }>();
  /** Verifications of keys of an API, by API and code (for /metrics). */
  readonly countsByApi: VerificationCountsByApi;

  constructor(private readonly deps: VerificationDeps) {
    this.countsByApi = new VerificationCountsByApi(deps.maxApisCounted ?? 1000);
  }

  /**
   * The key's snapshot from the cache, else from its source (then cached, also when unknown). A
   * load that a change overtook while it was in flight is used but not cached. Verifications of a
   * key whose load is in flight wait for that load rather than start another: a key holding many
   * permissions is loaded over many turns (embedded) or waits for PostgreSQL, and a burst of its
   * verifications must not load it once each.
   */
  private snapshot(hash: string): Maybe<KeySnapshot | undefined> {
    this.deps.changesElsewhere.look();
    const { cache } = this.deps;
    const cached = cache.get(hash);
    if (cached !== undefined) return cached ?? undefined;
    const drops = cache.drops;
    const inFlight = this.loading.get(hash);
    // A load begun before a change (a drop) must not answer a verification that came after it.
    if (inFlight !== undefined && inFlight.drops === drops) return inFlight.loaded;
    const loaded = this.deps.snapshots.load(hash);
    if (!(loaded instanceof Promise)) {
      cache.set(hash, loaded);
      return loaded;
    }
    const settled = loaded.then((snap) => {
      if (cache.drops === drops) cache.set(hash, snap);
      return snap;
    }).finally(() => {
      if (this.loading.get(hash)?.loaded === settled) this.loading.delete(hash);
    });
    this.loading.set(hash, { loaded: settled, drops });
    return settled;
  }

  /** The parsed query (400 `permissions_query_syntax_error` for a malformed one, which is not cached). */
  private query(text: string): PermissionQuery {
    let parsed = this.queries.get(text);
    if (parsed === undefined) {
      parsed = parsePermissionQuery(text);
      this.queries.set(text, parsed);
    }
    return parsed;
  }

  /**
   * Verifies a key; resolves after any credit spend is committed. Every verification of a key of
   * the caller's workspace is recorded for analytics, whatever its outcome.
   */
  verifyKey(principal: Principal, input: VerifyKeyInput): Maybe<VerifyKeyResult> {
    const startedMs = performance.now();
    const snap = this.snapshot(sha256Base64(input.key));
    if (snap instanceof Promise) return snap.then((loaded) => this.verifySnapshot(principal, input, loaded, startedMs));
    return this.verifySnapshot(principal, input, snap, startedMs);
  }

  /**
   * v1's verification (routes/v1): no root key, so the key's own workspace, verified as by a
   * principal that may verify every key of it; the same checks, limits and credits as verifyKey.
   * `apiId`, when given and not the key's API, answers FORBIDDEN after DISABLED (upstream v1's
   * place for it), recorded as upstream's v1 recorded it.
   */
  verifyKeyOfItsWorkspace(input: VerifyKeyInput, apiId?: string): Maybe<V1VerifyKeyResult> {
    const startedMs = performance.now();
    const snap = this.snapshot(sha256Base64(input.key));
    if (snap instanceof Promise) return snap.then((loaded) => this.verifyOwnSnapshot(input, apiId, loaded, startedMs));
    return this.verifyOwnSnapshot(input, apiId, snap, startedMs);
  }

  private verifyOwnSnapshot(input: VerifyKeyInput, apiId: string | undefined, snap: KeySnapshot | undefined, startedMs: number): Maybe<V1VerifyKeyResult> {
    if (!snap) return { valid: false, code: "NOT_FOUND" };
    if (apiId !== undefined && snap.apiId !== apiId && !snap.apiDeleted && snap.apiId !== null && !snap.deleted && snap.enabled) {
      return this.recorded(snap, input, { ...describe(snap, "VALID"), valid: false, code: "FORBIDDEN" as const }, startedMs, 0);
    }
    const principal: Principal = { workspaceId: snap.workspaceId, rootKeyId: "", permissions: this.verifyEveryKey, actor: KEY_ITSELF };
    return this.verifySnapshot(principal, input, snap, startedMs);
  }

  private verifySnapshot(principal: Principal, input: VerifyKeyInput, snap: KeySnapshot | undefined, startedMs: number): Maybe<VerifyKeyResult> {
    // An unknown key, or one of another workspace, has no key to attribute an event to.
    if (!snap || snap.workspaceId !== principal.workspaceId) return { valid: false, code: "NOT_FOUND" };
    const result = this.check(principal, input, snap);
    if (!(result instanceof Promise)) return this.recorded(snap, input, result, startedMs, 0);
    const cost = input.credits?.cost ?? 1;
    // Only the credit path is asynchronous, and there VALID means the cost was deducted.
    return result.then((r) => this.recorded(snap, input, r, startedMs, r.valid ? cost : 0));
  }

  /** The answer for a key of the caller's workspace: checks in upstream's order, the first failure wins. */
  private check(principal: Principal, input: VerifyKeyInput, snap: KeySnapshot): Maybe<VerifyKeyResult> {
    if (snap.apiDeleted || snap.apiId === null) return { valid: false, code: "NOT_FOUND" };
    if (!can(principal, "api", snap.apiId, "verify_key")) return { valid: false, code: "NOT_FOUND" };
    const query = input.permissions === undefined ? undefined : this.query(input.permissions);
    if (snap.deleted) return describe(snap, "NOT_FOUND");
    if (!snap.enabled) return describe(snap, "DISABLED");
    if (snap.expiresAt !== null && snap.expiresAt <= this.deps.clock.now()) return describe(snap, "EXPIRED");
    if (query && !evaluatePermissionQuery(query, snap.held)) {
      return describe(snap, "INSUFFICIENT_PERMISSIONS");
    }
    const limits = applyRatelimits(this.deps.limiter, snap, input.ratelimits ?? []);
    if (limits instanceof Promise) return limits.then((outcome) => this.afterLimits(snap, input, outcome));
    return this.afterLimits(snap, input, limits);
  }

  /** Rate limits decided: RATE_LIMITED, or the credits' answer. */
  private afterLimits(snap: KeySnapshot, input: VerifyKeyInput, limits: RatelimitOutcome | undefined): Maybe<VerifyKeyResult> {
    if (limits && !limits.passed) return describe(snap, "RATE_LIMITED", { ratelimits: limits.states });
    const ratelimits = limits?.states;
    if (snap.remaining === null) return describe(snap, "VALID", { ratelimits });
    const decision = this.deps.credits.take(snap, input.credits?.cost ?? 1);
    if (decision instanceof Promise) return decision.then((decided) => creditOutcome(snap, decided, ratelimits));
    return creditOutcome(snap, decision, ratelimits);
  }

  /** Hands the verification to the event pipeline (a synchronous push) and returns `result`. */
  private recorded<R extends { code: string }>(snap: KeySnapshot, input: VerifyKeyInput, result: R, startedMs: number, spentCredits: number): R {
    if (snap.apiId !== null) this.countsByApi.count(snap.apiId, result.code);
    this.deps.events?.record({
      timeMs: this.deps.clock.now(),
      workspaceId: snap.workspaceId,
      keySpaceId: snap.keySpaceId,
      keyId: snap.keyId,
      identityId: snap.identity?.id ?? "",
      externalId: snap.identity?.externalId ?? "",
      outcome: result.code,
      tags: input.tags ?? NO_TAGS,
      spentCredits,
      // The clock reads finer, but to the microsecond each event's raw JSON is about 15 bytes
      // shorter (115 -> 100 for a key without identity): less to write, less disk over the retention.
      latencyMs: toMicroseconds(performance.now() - startedMs),
    });
    return result;
  }
}

/** USAGE_EXCEEDED with the balance, or VALID with the balance after the spend. */
function creditOutcome(snap: KeySnapshot, decision: CreditDecision, ratelimits: RatelimitState[] | undefined): VerifyKeyResult {
  if (decision === "missing") return describe(snap, "NOT_FOUND");
  if (!decision.granted) return describe(snap, "USAGE_EXCEEDED", { ratelimits, credits: decision.remaining });
  if (decision.remaining === null) return describe(snap, "VALID", { ratelimits });
  return describe(snap, "VALID", { ratelimits, credits: decision.remaining });
}

/** The result for a key that was found: its fields, optional ones only when set; marked when it holds a meta as text. */
function describe(snap: KeySnapshot, code: VerificationCode, extra?: Pick<VerifyKeyResult, "ratelimits" | "credits">): VerifyKeyResult {
  const result: VerifyKeyResult = { valid: code === "VALID", code, keyId: snap.keyId };
  if (snap.holdsRawJson) markHoldsRawJson(result);
  if (snap.name !== null) result.name = snap.name;
  if (snap.meta !== null) result.meta = snap.meta;
  if (snap.expiresAt !== null) result.expires = snap.expiresAt;
  if (snap.remaining !== null) result.credits = snap.remaining;
  result.enabled = snap.enabled;
  if (snap.permissions.length > 0) result.permissions = snap.answer.permissions;
  if (snap.roles.length > 0) result.roles = snap.answer.roles;
  if (snap.identity) {
    result.identity = {
      id: snap.identity.id,
      externalId: snap.identity.externalId,
      ...(snap.identity.meta && !isEmptyMeta(snap.identity.meta) ? { meta: snap.identity.meta } : {}),
    };
  }
  if (extra?.credits !== undefined) result.credits = extra.credits;
  if (extra?.ratelimits) result.ratelimits = extra.ratelimits;
  return result;
}

/** Whether a meta is `{}` (a large one, kept as text, never is). */
function isEmptyMeta(meta: Meta): boolean {
  return !(meta instanceof RawJson) && Object.keys(meta).length === 0;
}
