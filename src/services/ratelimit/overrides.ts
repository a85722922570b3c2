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

/** A live override as the hot path needs it. */
export interface OverrideRecord {
  id: string;
  identifier: string;
  limit: number;
  duration: number;
  createdAt: number;
}

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

/**
 * The live overrides of one namespace, ready for matching. Among several matching wildcards the
 * most specific (most literal characters) wins, then the oldest, then the smallest id, so the
 * choice never depends on storage order. Kept up to date by `put` and `remove` after each change,
 * so a change does not make the next check read every override of the namespace again.
 */
export class OverrideIndex {
  private readonly exact = new Map<string, OverrideRecord>();
  private wildcards: Wildcard[] = [];

  constructor(records: readonly OverrideRecord[]) {
    for (const r of records) {
      this.exact.set(r.identifier, r);
      if (r.identifier.includes("*")) this.wildcards.push({ record: r, pattern: compile(r.identifier) });
    }
    this.wildcards.sort(bySpecificity);
  }

  /** Live overrides whose identifier holds a `*`. */
  get wildcardCount(): number {
    return this.wildcards.length;
  }

  /** The override that applies to `identifier`: the exact one, else the first matching wildcard. */
  match(identifier: string): OverrideRecord | undefined {
    const exact = this.exact.get(identifier);
    if (exact !== undefined) return exact;
    for (const w of this.wildcards) if (matchesCompiled(w.pattern, identifier)) return w.record;
    return undefined;
  }

  /** Adds an override, or replaces the one with the same identifier. */
  put(record: OverrideRecord): void {
    this.remove(record.identifier);
    this.exact.set(record.identifier, record);
    if (!record.identifier.includes("*")) return;
    this.wildcards.push({ record, pattern: compile(record.identifier) });
    this.wildcards.sort(bySpecificity);
  }

  /** Forgets the override with exactly this identifier, if any. */
  remove(identifier: string): void {
    if (!this.exact.delete(identifier) || !identifier.includes("*")) return;
    this.wildcards = this.wildcards.filter((w) => w.record.identifier !== identifier);
  }
}
