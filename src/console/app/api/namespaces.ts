/**
 * Rate-limit namespaces and a search over their overrides. No v2 operation lists namespaces, so
 * they are read from the audit log's `ratelimit.create_namespace` entries (a namespace is created
 * on first use and never deleted through the API): complete within the log's retention, for a key
 * that may read the log. listOverrides has no search, so a search reads the pages and filters.
 */
import type { ApiClient, Page } from "./client.ts";
import type { OverrideView } from "./routes.ts";

export interface NamespaceRef {
  id: string;
  name: string;
  createdAt: number;
}

const MAX_PAGES = 20;

export async function knownNamespaces(client: ApiClient): Promise<NamespaceRef[]> {
  const found: NamespaceRef[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < MAX_PAGES; i++) {
    const page = await client.page("audit.listLogs", { event: "ratelimit.create_namespace", ...(cursor ? { cursor } : {}) });
    for (const entry of page.items) {
      const ns = entry.resources.find((r) => r.type === "ratelimitNamespace");
      if (ns) found.push({ id: ns.id, name: ns.name ?? ns.id, createdAt: entry.time });
    }
    cursor = page.cursor;
    if (cursor === undefined) break;
  }
  return found.toSorted((a, b) => a.name.localeCompare(b.name));
}

/** The overrides of `namespace` (within MAX_PAGES pages of 100) whose identifier contains `search`, case-insensitively. */
export async function searchOverrides(client: ApiClient, namespace: string, search: string): Promise<Page<OverrideView>> {
  const term = search.toLowerCase();
  const items: OverrideView[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < MAX_PAGES; i++) {
    const page = await client.page("ratelimit.listOverrides", { namespace, limit: 100, ...(cursor ? { cursor } : {}) });
    items.push(...page.items.filter((o) => o.identifier.toLowerCase().includes(term)));
    cursor = page.cursor;
    if (cursor === undefined) break;
  }
  return { items, cursor: undefined };
}
