/**
 * Override matching (upstream §5.15): an override whose identifier equals the request's wins;
 * otherwise a wildcard override whose pattern matches, where `*` stands for any run of characters
 * (also none), the pattern is anchored at both ends and every other character is literal.
 *
 * Matching is a two-pointer glob scan, not a RegExp: no character needs escaping, and a pattern
 * with many stars cannot make a match take exponential time (worst case O(pattern × identifier)).
 */

/** A live override as the hot path needs it. */
export interface OverrideRecord {
  id: string;
  identifier: string;
  limit: number;
  duration: number;
  createdAt: number;
}

/** Whether `identifier` matches `pattern` (`*` = any run of characters, anchored, the rest literal). */
export function matchesPattern(pattern: string, identifier: string): boolean {
  let p = 0;
  let s = 0;
  let starAt = -1;
  let resumeAt = 0;
  while (s < identifier.length) {
    const pc = pattern[p];
    if (pc === "*") {
      starAt = p++;
      resumeAt = s;
    } else if (pc !== undefined && pc === identifier[s]) {
      p++;
      s++;
    } else if (starAt >= 0) {
      // Let the last star swallow one more character and retry the rest of the pattern.
      p = starAt + 1;
      s = ++resumeAt;
    } else {
      return false;
    }
  }
  while (pattern[p] === "*") p++;
  return p === pattern.length;
}

/** Characters of a pattern that are not `*`: the more, the more specific. */
function literalLength(pattern: string): number {
  let n = 0;
  for (const c of pattern) if (c !== "*") n++;
  return n;
}

/**
 * The live overrides of one namespace, ready for matching. Among several matching wildcards the
 * most specific (most literal characters) wins, then the oldest, then the smallest id, so the
 * choice never depends on storage order.
 */
export class OverrideIndex {
  private readonly exact = new Map<string, OverrideRecord>();
  private readonly wildcards: OverrideRecord[] = [];

  constructor(records: readonly OverrideRecord[]) {
    for (const r of records) {
      this.exact.set(r.identifier, r);
      if (r.identifier.includes("*")) this.wildcards.push(r);
    }
    this.wildcards.sort((a, b) =>
      literalLength(b.identifier) - literalLength(a.identifier) || a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** The override that applies to `identifier`: the exact one, else the first matching wildcard. */
  match(identifier: string): OverrideRecord | undefined {
    const exact = this.exact.get(identifier);
    if (exact !== undefined) return exact;
    for (const w of this.wildcards) if (matchesPattern(w.identifier, identifier)) return w;
    return undefined;
  }
}
