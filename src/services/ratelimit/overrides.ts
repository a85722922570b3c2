/**
 * Override matching (upstream §5.15): an override whose identifier equals the request's wins;
 * otherwise a wildcard override whose pattern matches, where `*` stands for any run of characters
 * (also none), the pattern is anchored at both ends and every other character is literal.
 *
 * A pattern is split at its stars once, when the index is built; matching is then a prefix and a
 * suffix comparison and a left-to-right search for each literal between stars (leftmost is always
 * right when `*` is the only wildcard, so nothing is retried). The searches are the engine's
 * native string search: a long, hostile pattern costs a check little, and no RegExp is involved.
 * Every check scans a namespace's wildcards, so their number is capped (service.ts).
 */

import type { OverrideRecord } from "../../storage/records/index.ts";
import type { Maybe } from "../../storage/work.ts";

export type { OverrideRecord } from "../../storage/records/index.ts";

/** A pattern split at its stars: `head*middle[0]*…*tail`. */
interface CompiledPattern {
  head: string;
  middles: string[];
  tail: string;
  /** Characters that are not `*`: the least an identifier needs, and the pattern's specificity. */
  literalLength: number;
}

function compile(pattern: string): CompiledPattern {
  const parts = pattern.split("*");
  const head = parts[0] ?? "";
  const tail = parts.length > 1 ? parts[parts.length - 1]! : "";
  const middles = parts.slice(1, -1).filter((p) => p !== "");
  return { head, middles, tail, literalLength: pattern.length - (parts.length - 1) };
}

/** Whether `identifier` matches a compiled pattern that holds at least one star. */
function matchesCompiled(c: CompiledPattern, identifier: string): boolean {
  if (identifier.length < c.literalLength || !identifier.startsWith(c.head) || !identifier.endsWith(c.tail)) return false;
  let from = c.head.length;
  const end = identifier.length - c.tail.length;
  for (const middle of c.middles) {
    const at = identifier.indexOf(middle, from);
    if (at < 0 || at + middle.length > end) return false;
    from = at + middle.length;
  }
  return true;
}

/** Whether `identifier` matches `pattern` (`*` = any run of characters, anchored, the rest literal). */
export function matchesPattern(pattern: string, identifier: string): boolean {
  return pattern.includes("*") ? matchesCompiled(compile(pattern), identifier) : pattern === identifier;
}

interface Wildcard {
  record: OverrideRecord;
  pattern: CompiledPattern;
}

/** Most literal characters first, then the oldest, then the smallest id. */
function bySpecificity(a: Wildcard, b: Wildcard): number {
  const ra = a.record;
  const rb = b.record;
  return b.pattern.literalLength - a.pattern.literalLength || ra.createdAt - rb.createdAt || (ra.id < rb.id ? -1 : ra.id > rb.id ? 1 : 0);
}

/** Bytes charged for an override besides its identifier's characters: its record, id, map entry and the map's room to grow. */
export const OVERRIDE_FIXED_BYTES = 512;
/** Bytes charged for a wildcard's split pattern besides its characters. */
const PATTERN_FIXED_BYTES = 128;

/** What an override held in memory may cost at worst: two bytes per UTF-16 unit, twice for a split pattern. */
export function overrideBytes(identifier: string): number {
  const bytes = OVERRIDE_FIXED_BYTES + 2 * identifier.length;
  return identifier.includes("*") ? bytes + PATTERN_FIXED_BYTES + 2 * identifier.length : bytes;
}

/** What a match finds: the override that applies, or none. */
export type Found = OverrideRecord | undefined;

/**
 * Where an index that has let its exact overrides go finds them again. `Answer`: Found when the
 * lookup answers at once (SQLite), Maybe<Found> when its store may answer promises (the cluster).
 */
export interface Spill<Answer extends Maybe<Found> = Found> {
  /** Bytes of overrides the index may hold; beyond them it keeps only its wildcards. */
  maxBytes: number;
  /** The live override stored with exactly this identifier (a pattern compared as written). */
  findExact: (identifier: string) => Answer;
}

/** A namespace's index as a check holds it, whichever backend its spill asks. */
export type NamespaceOverrides = OverrideIndex<Maybe<Found>>;

const NO_SPILL: Spill<never> = { maxBytes: Number.POSITIVE_INFINITY, findExact: () => undefined as never };

/**
 * The live overrides of one namespace, ready for matching. Among several matching wildcards the
 * most specific (most literal characters) wins, then the oldest, then the smallest id, so the
 * choice never depends on storage order. Kept up to date by `put` and `remove` after each change,
 * so a change does not make the next check read every override of the namespace again.
 *
 * Past `spill.maxBytes` the index is spilled: it keeps its wildcards (their number is capped) and
 * asks `spill.findExact` for an exact identifier on every check, so a namespace with any number of
 * overrides holds a bounded amount of memory. Matching is the same in both states.
 */
export class OverrideIndex<Answer extends Maybe<Found> = Found> {
  /** Every override by identifier; once spilled, the wildcards only. */
  private readonly byIdentifier = new Map<string, OverrideRecord>();
  private wildcards: Wildcard[] = [];
  private heldBytes = 0;
  private spilled = false;

  constructor(records: readonly OverrideRecord[], private readonly spill: Spill<Answer> = NO_SPILL) {
    for (const r of records) this.add(r);
    this.wildcards.sort(bySpecificity);
    if (this.heldBytes > spill.maxBytes) this.spillExact();
  }

  /** An index that starts spilled: the namespace's wildcards, its exact overrides left to `spill.findExact`. */
  static spilled<Answer extends Maybe<Found>>(wildcards: readonly OverrideRecord[], spill: Spill<Answer>): OverrideIndex<Answer> {
    const index = new OverrideIndex<Answer>([], spill);
    index.spilled = true;
    for (const r of wildcards) index.add(r);
    index.wildcards.sort(bySpecificity);
    return index;
  }

  /** Live overrides whose identifier holds a `*`. */
  get wildcardCount(): number {
    return this.wildcards.length;
  }

  /** Overrides held in memory: all of them, or once spilled the wildcards. */
  get size(): number {
    return this.byIdentifier.size;
  }

  /** What the held overrides may cost, by overrideBytes. */
  get bytes(): number {
    return this.heldBytes;
  }

  /** Whether exact identifiers are looked up through `spill.findExact` rather than held. */
  get isSpilled(): boolean {
    return this.spilled;
  }

  /**
   * The override that applies to `identifier`: the exact one, else the first matching wildcard.
   * Only a spilled index's exact lookup may answer a promise; a held one answers at once.
   */
  match(identifier: string): Answer {
    if (!this.spilled) return (this.byIdentifier.get(identifier) ?? this.matchWildcard(identifier)) as Answer;
    const exact = this.spill.findExact(identifier);
    if (exact instanceof Promise) return exact.then((found: Found) => found ?? this.matchWildcard(identifier)) as Answer;
    return ((exact as Found) ?? this.matchWildcard(identifier)) as Answer;
  }

  private matchWildcard(identifier: string): Found {
    for (const w of this.wildcards) if (matchesCompiled(w.pattern, identifier)) return w.record;
    return undefined;
  }

  /** Adds an override, or replaces the one with the same identifier. */
  put(record: OverrideRecord): void {
    this.remove(record.identifier);
    if (this.spilled && !record.identifier.includes("*")) return;
    this.add(record);
    this.wildcards.sort(bySpecificity);
    if (this.heldBytes > this.spill.maxBytes) this.spillExact();
  }

  /** Forgets the override with exactly this identifier, if any. */
  remove(identifier: string): void {
    if (!this.byIdentifier.delete(identifier)) return;
    this.heldBytes -= overrideBytes(identifier);
    if (identifier.includes("*")) this.wildcards = this.wildcards.filter((w) => w.record.identifier !== identifier);
  }

  /** Adds a record known not to be held; the caller sorts the wildcards. */
  private add(r: OverrideRecord): void {
    this.byIdentifier.set(r.identifier, r);
    this.heldBytes += overrideBytes(r.identifier);
    if (r.identifier.includes("*")) this.wildcards.push({ record: r, pattern: compile(r.identifier) });
  }

  private spillExact(): void {
    this.spilled = true;
    for (const identifier of this.byIdentifier.keys()) if (!identifier.includes("*")) this.remove(identifier);
  }
}
