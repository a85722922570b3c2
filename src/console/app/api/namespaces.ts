/**
 * Rate-limit namespaces, as ratelimit.listNamespaces shows them (the ones whose overrides the key
 * may read), and a search over one namespace's overrides. listOverrides has no search, so a search
 * reads the pages and filters. A page may hold fewer items than its `limit` (pages end at a byte
 * budget too), so only the cursor says whether there is more.
 */
import type { ApiClient, Page } from "./client.ts";
import type { NamespaceView, OverrideView } from "./routes.ts";

const MAX_PAGES = 20;
const SCREENFUL = 25;

/**
 * The listed namespace whose name or id is `ref`, or undefined (none, or the key may not read its
 * overrides). The search matches substrings, so the exact match is looked for in its pages (bounded).
 */
export async function findNamespace(client: ApiClient, ref: string): Promise<NamespaceView | undefined> {
  for await (const page of client.pages("ratelimit.listNamespaces", { search: ref, limit: 100 }, MAX_PAGES)) {
    const found = page.items.find((n) => n.name === ref || n.id === ref);
    if (found) return found;
  }
  return undefined;
}

/** Every listed namespace (within MAX_PAGES pages), for a choice of namespace. */
export async function allNamespaces(client: ApiClient): Promise<NamespaceView[]> {
  const namespaces: NamespaceView[] = [];
  for await (const page of client.pages("ratelimit.listNamespaces", { limit: 100 }, MAX_PAGES)) namespaces.push(...page.items);
  return namespaces;
}

/**
 * The overrides of `namespace` from `cursor` whose identifier contains `search`, case-insensitively:
 * read page by page until a screenful matched or MAX_PAGES were read; the cursor carries on from there.
 */
export async function searchOverrides(client: ApiClient, namespace: string, search: string, cursor?: string): Promise<Page<OverrideView>> {
  const term = search.toLowerCase();
  const items: OverrideView[] = [];
  let next = cursor;
  for await (const page of client.pages("ratelimit.listOverrides", { namespace, limit: 100, ...(cursor === undefined ? {} : { cursor }) }, MAX_PAGES)) {
    items.push(...page.items.filter((o) => o.identifier.toLowerCase().includes(term)));
    next = page.cursor;
    if (items.length >= SCREENFUL) break;
  }
  return { items, cursor: next };
}
