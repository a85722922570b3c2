/**
 * A key's effective permissions (held directly and through its roles) as a snapshot keeps them,
 * built once per snapshot whichever backend loaded it: the sorted list, its index for the query
 * evaluator (exact names in a Set, held wildcards as prefixes: a query costs what it names, never
 * what the key holds), and what answers carry. A long list goes into answers as its JSON text
 * (lib/raw-json.ts): serialising 100,000 names again for every verification held the event loop
 * for milliseconds each time.
 */
import { RawJson } from "../../lib/raw-json.ts";
import { HeldBuilder, holdPermissions, type HeldPermissions } from "./permission-query.ts";

export interface PermissionSet {
  /** Unique and sorted in byte order (SQLite's BINARY, PostgreSQL's "C"); shared, never mutated. */
  permissions: readonly string[];
  held: HeldPermissions;
  /** The list's JSON text. */
  json: string;
  /** What answers carry: the list itself, or (a long one) its JSON text to be spliced in. */
  answer: readonly string[] | RawJson;
}

/** Lists whose JSON text has at least this many characters go into answers as text (the threshold of a raw meta). */
export const RAW_LIST_MIN_CHARS = 1024;

/** The set of `permissions` (unique, sorted), whose JSON text is `json`; `held` when already indexed. */
export function permissionSet(permissions: readonly string[], json: string, held: HeldPermissions = holdPermissions(permissions)): PermissionSet {
  return { permissions, held, json, answer: answerList(permissions, json) };
}

/** A list or its JSON text as answers carry it: the text of a long one (already at hand), else the list. */
export function answerList(list: readonly string[], json: string): readonly string[] | RawJson {
  return json.length >= RAW_LIST_MIN_CHARS ? new RawJson(json) : list;
}

/** Names indexed a turn at a time when a list arrives whole (PostgreSQL's statement gathers it): a turn's share. */
const NAMES_PER_TURN = 5000;

/** The next turn of the event loop: other requests run before the next slice. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * The set of a long list given as its JSON text, indexed NAMES_PER_TURN names a turn: only the
 * parse is done at once (parsing 100,000 names costs about what indexing them does).
 */
export async function permissionSetInSlices(json: string): Promise<PermissionSet> {
  const permissions = JSON.parse(json) as string[];
  const held = new HeldBuilder();
  for (let from = 0; from < permissions.length; from += NAMES_PER_TURN) {
    await nextTurn();
    held.add(permissions.slice(from, from + NAMES_PER_TURN));
  }
  return permissionSet(permissions, json, held.build());
}

/**
 * Merges sorted runs of unique names into one sorted list without duplicates, a run at a time, so
 * that a caller can spread the work over turns of the event loop: runs of similar length are
 * merged as they come (as merge sort does), so each name is copied about log2(runs) times.
 */
export class SortedRuns {
  private readonly runs: string[][] = [];

  push(run: string[]): void {
    this.runs.push(run);
    for (let n = this.runs.length; n > 1 && this.runs[n - 2]!.length <= 2 * this.runs[n - 1]!.length; n = this.runs.length) {
      this.mergeTop();
    }
  }

  /** Merges the last two runs; false when one run (or none) is left. */
  mergeTop(): boolean {
    if (this.runs.length < 2) return false;
    const b = this.runs.pop()!;
    const a = this.runs.pop()!;
    this.runs.push(mergeUnique(a, b));
    return true;
  }

  /** The merged list, once `mergeTop` answers false. */
  get result(): string[] {
    return this.runs[0] ?? [];
  }
}

/** Permission names are ASCII (their schema), where `<` on strings is SQLite's byte order. */
function mergeUnique(a: readonly string[], b: readonly string[]): string[] {
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    if (x === y) {
      out.push(x);
      i++;
      j++;
    } else if (x < y) {
      out.push(x);
      i++;
    } else {
      out.push(y);
      j++;
    }
  }
  while (i < a.length) out.push(a[i++]!);
  while (j < b.length) out.push(b[j++]!);
  return out;
}
