/**
 * A page of an API's keys, optionally searched. apis.listKeys filters by externalId only, so a
 * search for a name, an externalId or the start of a key reads the list forward, page by page,
 * keeping the matches, and stops once it has a screenful or has read a bounded number of pages;
 * the returned cursor carries on from there.
 */
import type { ApiClient, Page } from "./client.ts";
import type { KeyView } from "./routes.ts";

const SCAN_PAGE_SIZE = 100;
const SCAN_MAX_PAGES = 10;
const SCREENFUL = 25;

export function keyMatches(key: KeyView, term: string): boolean {
  const t = term.toLowerCase();
  return [key.name, key.identity?.externalId, key.start, key.keyId].some((v) => v !== undefined && v.toLowerCase().includes(t));
}

export async function keysPage(client: ApiClient, apiId: string, cursor: string | undefined, search: string): Promise<Page<KeyView>> {
  const from = cursor === undefined ? {} : { cursor };
  if (search === "") return client.page("apis.listKeys", { apiId, limit: SCREENFUL, ...from });
  const items: KeyView[] = [];
  let next = cursor;
  for await (const page of client.pages("apis.listKeys", { apiId, limit: SCAN_PAGE_SIZE, ...from }, SCAN_MAX_PAGES)) {
    items.push(...page.items.filter((k) => keyMatches(k, search)));
    next = page.cursor;
    if (items.length >= SCREENFUL) break;
  }
  return { items, cursor: next };
}
