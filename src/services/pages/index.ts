/**
 * The byte budget of list pages (TOLLGATE_LIST_PAGE_BYTES): a page ends early when its items would
 * pass the budget, always holding at least one, and answers the id of the first item it left out as
 * the cursor, so that following the cursors gives every item exactly once, as an item-bounded page
 * does. A page whose rows hold large stored values (meta) is planned from the stores' `listSizes`
 * (the stored text's length, read without the text) and its rows read only up to the last planned
 * id; the built items are measured again with their small parts, which may add up too.
 * Why measured before reading: a page of identities with meta at its bound would otherwise be read,
 * parsed and serialised whole on the one event loop that every workspace shares.
 */
import type { SizedRow } from "../../storage/records/index.ts";
import { RawJson } from "../../lib/raw-json.ts";

export interface Page<T> {
  items: T[];
  /** Id of the first row of the next page; undefined on the last page. */
  cursor: string | undefined;
}

/** The page's rows as planned from their stored sizes. */
export interface PagePlan {
  /** The page's last id (inclusive), for the store's `until`; undefined: the page is empty. */
  until: string | undefined;
  /** First id of the next page; undefined when the rows end with this page. */
  next: string | undefined;
  /** The stored bytes of each planned row, by id. */
  storedBytes: ReadonlyMap<string, number>;
}

/** TOLLGATE_LIST_PAGE_BYTES' default, for services built without the configuration (tests, tools). */
export const DEFAULT_PAGE_BYTES = 4 * 1024 * 1024;

/** A comma between items, or the page's brackets: what an item adds beyond its own JSON. */
const SEPARATOR_BYTES = 1;

/** How many of `sizes`, from the first, fit in `budgetBytes` together: at least one when there is one. */
export function countWithinBudget(sizes: readonly number[], budgetBytes: number): number {
  let total = 0;
  for (let i = 0; i < sizes.length; i++) {
    total += (sizes[i] ?? 0) + SEPARATOR_BYTES;
    if (total > budgetBytes && i > 0) return i;
  }
  return sizes.length;
}

/** Plans a page of at most `limit` rows from `sized` (the store's `limit + 1` sized rows, in page order). */
export function planPage(sized: readonly SizedRow[], limit: number, budgetBytes: number): PagePlan {
  const first = sized.slice(0, limit);
  const count = countWithinBudget(first.map((row) => row.bytes), budgetBytes);
  return {
    until: first[count - 1]?.id,
    next: sized[count]?.id,
    storedBytes: new Map(first.slice(0, count).map((row) => [row.id, row.bytes])),
  };
}

/**
 * The page of `items` (in page order) that fits `budgetBytes` as `bytesOf` measures each, and the
 * next page's cursor: the first item left out, else `next` (the plan's, or the row after `limit`).
 */
export function fitPage<T>(items: readonly T[], idOf: (item: T) => string, bytesOf: (item: T) => number, budgetBytes: number, next: string | undefined): Page<T> {
  const count = countWithinBudget(items.map(bytesOf), budgetBytes);
  const cut = items[count];
  return { items: items.slice(0, count), cursor: cut !== undefined ? idOf(cut) : next };
}

/**
 * UTF-8 bytes of `value`'s JSON text: for an item's small parts, for the items of lists whose
 * rows hold no large stored value (each bounded by its route's schema), and for a stored text.
 */
export function jsonBytes(value: unknown): number {
  // A stored text is measured as it is: serialising it would parse it first (RawJson.toJSON).
  if (value instanceof RawJson) return Buffer.byteLength(value.text, "utf8");
  const text = JSON.stringify(value);
  return text === undefined ? 0 : Buffer.byteLength(text, "utf8");
}
