/** `POST /v2/ratelimit.listNamespaces`: a tollgate addition (upstream lists no namespaces), used by the console to find the workspace's namespaces. */
import { okPage } from "../../../http/envelope.ts";
import { optionalObjectBody } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { LIST_NAMESPACES_DESCRIPTION, ListNamespacesBody, NamespaceData } from "./schemas.ts";
import { documented } from "../../../http/responses.ts";
import { ListOf } from "../../../http/views.ts";

export const ratelimitListNamespacesRoute = (deps: RouteDeps) => operation({
  path: "/v2/ratelimit.listNamespaces",
  example: {limit: 100},
  body: ListNamespacesBody,
  detail: {
    summary: "List rate-limit namespaces", tags: ["ratelimits"],
    description: `${LIST_NAMESPACES_DESCRIPTION} \`data\` is the page, with \`pagination\`.`,
    ...documented({ data: ListOf(NamespaceData, "A page of the workspace's namespaces"), paged: true }),
  },
  handle: async (body, request, info) => {
    const page = await deps.services.ratelimits.listNamespaces(deps.principal(request, info), optionalObjectBody(body, "/v2/ratelimit.listNamespaces"));
    return okPage(page.items, page.cursor);
  },
});
