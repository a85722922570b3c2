/**
 * Root-key authentication: `Authorization: Bearer <root key>` → Principal. Principals are cached by
 * the header as sent, so the hot paths neither parse it nor read SQLite for them. Only the canonical
 * header (`Bearer ` and the key, nothing else) is cached: each cached entry is then one stored root
 * key, so callers cannot fill the cache with variants of one header padded to any length. The cache is
 * dropped whenever root keys or workspaces change, here (`invalidate`, called by the workspace
 * service) or in another process such as the CLI (storage/external-commits.ts: seen by every
 * request that starts a millisecond or more after the commit). Expiry is checked against the clock
 * on every request.
 * Where root keys are looked up is given (`RootKeyLookup`): SQLite answers at once; PostgreSQL (the
 * cluster mode) with a promise, which `prepare` awaits before the request is handled, so that
 * `authenticate` stays synchronous for the routes. Hashes not found are remembered as unknown
 * (unknown-root-keys.ts), and requests that look up one hash at once share one lookup; in the
 * cluster mode at most a few lookups run at once (lookup-gate.ts), so made-up keys cost
 * PostgreSQL neither a read per request nor the pool's connections.
 */
import { LRUCache } from "lru-cache";
import type { RecordBackend, RootKeyCredential } from "../../storage/records/index.ts";
import { step, type Maybe } from "../../storage/work.ts";
import type { ChangesElsewhere } from "../../storage/external-commits.ts";
import type { Clock } from "../../lib/clock.ts";
import { sha256Base64 } from "../../lib/hashing.ts";
import { AppError } from "../../errors/app-error.ts";
import { normaliseGrants } from "./permissions.ts";
import { UnknownRootKeys } from "./unknown-root-keys.ts";
import { LookupGate } from "./lookup-gate.ts";
import type { Actor, Principal } from "./principal.ts";

export type { Actor, Principal } from "./principal.ts";
export { can, grantedIds, permittedIds, requirePermission, missingPermissions, ALL_GRANTS, isValidGrant } from "./permissions.ts";

export interface RequestOrigin {
  remoteIp?: string;
  userAgent?: string;
}

interface CachedRootKey {
  row: RootKeyCredential;
  permissions: ReadonlySet<string>;
}

/** The root key with this hash (base64 of its SHA-256), if any. */
export type RootKeyLookup = (hash: string) => Maybe<RootKeyCredential | undefined>;

/** What `prepare` found for one request's header: the root key, or none. */
export interface PreparedRootKey {
  authorization: string;
  entry: CachedRootKey | undefined;
}

/** The lookup through the record stores (`findByHash`), whichever backend they are on. */
export function recordsRootKeyLookup(records: RecordBackend): RootKeyLookup {
  return (hash) => records.read((r) => step(r.rootKeys.findByHash(hash)));
}

const PRINCIPAL_CACHE_SIZE = 10_000;

export interface AuthenticatorDeps {
  lookup: RootKeyLookup;
  /** The lookup answers with a promise (the cluster mode), so requests are prepared. */
  lookupAnswersLater: boolean;
  clock: Clock;
  /** Calls invalidate() once another process committed (boot.ts). */
  changesElsewhere: ChangesElsewhere;
  /** Hashes not found remembered, and for how long (TOLLGATE_UNKNOWN_ROOT_KEYS, _TTL_MS). */
  unknown: { size: number; ttlMs: number };
  /** Lookups answered later that run at once (TOLLGATE_ROOT_KEY_LOOKUPS). */
  concurrentLookups: number;
}

export class RootKeyAuthenticator {
  private readonly byHeader = new LRUCache<string, CachedRootKey>({ max: PRINCIPAL_CACHE_SIZE });
  private readonly unknown: UnknownRootKeys;
  private readonly gate: LookupGate;
  /** Lookups in flight by hash, shared by the requests that name the same key meanwhile; at most the gate's running and waiting. */
  private readonly inFlight = new Map<string, Promise<RootKeyCredential | undefined>>();
  /** Counts invalidations: a lookup that began before one may have read what the change made stale. */
  private generation = 0;
  private lookupsSent = 0;

  constructor(private readonly deps: AuthenticatorDeps) {
    this.unknown = new UnknownRootKeys({ ...deps.unknown, clock: deps.clock });
    this.gate = new LookupGate(deps.concurrentLookups);
  }

  /** Principals cached, for tests. */
  get cachedPrincipals(): number {
    return this.byHeader.size;
  }

  /** Lookups sent to the records since start, and hashes remembered as unknown: for tests. */
  get lookups(): { sent: number; unknownHashes: number } {
    return { sent: this.lookupsSent, unknownHashes: this.unknown.size };
  }

  /**
   * Root keys or workspaces changed (in this process, or in another one, another node included):
   * forget every cached principal and every hash remembered as unknown.
   */
  invalidate(): void {
    this.generation++;
    this.byHeader.clear();
    this.unknown.clear();
    this.inFlight.clear();
  }

  /**
   * 400 missing/malformed header, 401 unknown or revoked key, 403 disabled or expired key or workspace.
   * `origin` may be a function: it is then called only if the principal's actor is read (an audited
   * change), since finding a request's peer address costs more than the rest of a cached lookup.
   */
  authenticate(authorization: string | null | undefined, origin: RequestOrigin | (() => RequestOrigin) = {}, prepared?: PreparedRootKey): Principal {
    const cached = prepared !== undefined && prepared.authorization === authorization ? known(prepared.entry) : this.cached(authorization);
    const row = cached.row;
    if (row.revokedAt !== null) throw unknownRootKey();
    if (!row.enabled) throw new AppError("key_disabled", { detail: "The root key is disabled." });
    if (row.expiresAt !== null && row.expiresAt <= this.deps.clock.now()) {
      throw new AppError("forbidden", { detail: "The root key has expired." });
    }
    if (!row.workspaceEnabled) throw new AppError("workspace_disabled", { detail: "The workspace of this root key is disabled." });
    return new RootKeyPrincipal(row, cached.permissions, origin);
  }

  /**
   * The root key an Authorization header names. Cached by the header as sent, so a hit neither
   * parses it nor builds the token string; only a canonical header that named a stored key is cached.
   */
  private cached(authorization: string | null | undefined): CachedRootKey {
    this.deps.changesElsewhere.look();
    const hit = authorization ? this.byHeader.get(authorization) : undefined;
    if (hit) return hit;
    const token = parseBearer(authorization);
    const hash = sha256Base64(token);
    if (this.unknown.has(hash)) throw unknownRootKey();
    this.lookupsSent++;
    const row = this.deps.lookup(hash);
    if (row instanceof Promise) throw new Error("a root key looked up with a promise must be prepared before it authenticates");
    if (!row) this.unknown.add(hash);
    return known(this.remember(authorization!, token, row));
  }

  /**
   * For a lookup that answers with a promise: finds the header's root key before the request is
   * handled; undefined when nothing needs waiting for (cached, answered at once, or a header that
   * will not parse). Never rejects for a bad header: `authenticate` answers that.
   */
  prepare(authorization: string | null | undefined): Promise<PreparedRootKey> | undefined {
    if (!this.deps.lookupAnswersLater || !authorization || this.byHeader.has(authorization)) return undefined;
    this.deps.changesElsewhere.look();
    const token = BEARER.exec(authorization)?.[1];
    if (!token) return undefined;
    const hash = sha256Base64(token);
    // Remembered as unknown: authenticate answers 401 from the same set, with no lookup.
    if (this.unknown.has(hash)) return undefined;
    const found = this.inFlight.get(hash) ?? this.lookUpLater(hash);
    return found.then((row) => ({ authorization, entry: this.remember(authorization, token, row) }));
  }

  /** One lookup of `hash` through the gate, shared until it answers; a hash not found is remembered unless a change came meanwhile. */
  private lookUpLater(hash: string): Promise<RootKeyCredential | undefined> {
    const generation = this.generation;
    const found = this.gate.run(() => {
      this.lookupsSent++;
      return this.deps.lookup(hash);
    }).then((row) => {
      if (!row && generation === this.generation) this.unknown.add(hash);
      return row;
    }).finally(() => {
      if (this.inFlight.get(hash) === found) this.inFlight.delete(hash);
    });
    this.inFlight.set(hash, found);
    return found;
  }

  /** The entry of a row found, cached by its header when that is the canonical one. */
  private remember(authorization: string, token: string, row: RootKeyCredential | undefined): CachedRootKey | undefined {
    if (!row) return undefined;
    const entry = { row, permissions: normaliseGrants(row.permissions) };
    if (authorization.length === CANONICAL_PREFIX.length + token.length && authorization.startsWith(CANONICAL_PREFIX)) this.byHeader.set(authorization, entry);
    return entry;
  }
}

function known(entry: CachedRootKey | undefined): CachedRootKey {
  if (!entry) throw unknownRootKey();
  return entry;
}

/** A root key's principal; its actor is built on first read, with the request's origin. */
class RootKeyPrincipal implements Principal {
  readonly workspaceId: string;
  readonly rootKeyId: string;
  private builtActor: Actor | undefined;

  constructor(private readonly row: RootKeyCredential, readonly permissions: ReadonlySet<string>, private readonly origin: RequestOrigin | (() => RequestOrigin)) {
    this.workspaceId = row.workspaceId;
    this.rootKeyId = row.id;
  }

  get actor(): Actor {
    this.builtActor ??= { type: "root_key", id: this.row.id, name: this.row.name, ...(typeof this.origin === "function" ? this.origin() : this.origin) };
    return this.builtActor;
  }
}

function unknownRootKey(): AppError {
  return new AppError("root_key_not_found", { detail: "The provided root key is invalid. We could not find the requested key." });
}

const MISSING_HEADER = "Authorization header for 'bearer' scheme";
const BEARER = /^\s*Bearer\s+(\S+)\s*$/;
const CANONICAL_PREFIX = "Bearer ";

function parseBearer(authorization: string | null | undefined): string {
  if (authorization === null || authorization === undefined || authorization.trim() === "") {
    // Upstream's words and kind: its schema validator reports the missing security scheme.
    throw new AppError("invalid_input", {
      detail: MISSING_HEADER,
      errors: [{ location: "header.Authorization", message: MISSING_HEADER, fix: "Send 'Authorization: Bearer <root key>'." }],
    });
  }
  const match = BEARER.exec(authorization);
  if (!match?.[1]) {
    throw new AppError("authentication_malformed", {
      detail: "You must provide a valid root key in the Authorization header in the format 'Bearer ROOT_KEY'. Your authorization header is missing the 'Bearer ' prefix.",
    });
  }
  return match[1];
}
