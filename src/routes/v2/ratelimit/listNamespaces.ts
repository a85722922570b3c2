/** ratelimit.listNamespaces: a tollgate addition (upstream lists no namespaces), used by the console to find the workspace's namespaces. */
import { Elysia } from "elysia";
import { okPage } from "../../../http/envelope.ts";
import { optionalObjectBody } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { LIST_NAMESPACES_DESCRIPTION, ListNamespacesBody, NamespaceData } from "./schemas.ts";
import { documented } from "../../../http/responses.ts";
import { ListOf } from "../../../http/views.ts";

export const ratelimitListNamespacesRoute = (deps: RouteDeps) =>
  new Elysia().post("/v2/ratelimit.listNamespaces", ({ body, request }) => {
    const page = deps.services.ratelimits.listNamespaces(deps.principal(request), optionalObjectBody(body));
    return okPage(page.items, page.cursor);
  }, {
    body: ListNamespacesBody,
    detail: {
      summary: "List rate-limit namespaces", tags: ["ratelimit"],
      description: `${LIST_NAMESPACES_DESCRIPTION} \`data\` is the page, with \`pagination\`.`,
      ...documented({ data: ListOf(NamespaceData, "A page of the workspace's namespaces"), paged: true }),
    },
  });
