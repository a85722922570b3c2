/** The workspace's APIs as the key may see them, all pages (up to a bound), for names and key spaces. */
import type { ApiClient } from "./client.ts";
import type { ApiListItem } from "./routes.ts";

const MAX_PAGES = 20;

export async function allApis(client: ApiClient): Promise<ApiListItem[]> {
  const apis: ApiListItem[] = [];
  for await (const page of client.pages("apis.listApis", {}, MAX_PAGES)) apis.push(...page.items);
  return apis;
}
