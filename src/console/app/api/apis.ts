/** The workspace's APIs as the key may see them, all pages (up to a bound), for names and key spaces. */
import type { ApiClient } from "./client.ts";
import type { ApiListItem } from "./routes.ts";

const MAX_PAGES = 20;

export async function allApis(client: ApiClient): Promise<ApiListItem[]> {
  const apis: ApiListItem[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < MAX_PAGES; i++) {
    const page = await client.page("apis.listApis", cursor === undefined ? {} : { cursor });
    apis.push(...page.items);
    cursor = page.cursor;
    if (cursor === undefined) break;
  }
  return apis;
}
