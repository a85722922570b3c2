/**
 * `POST /v2/ratelimits.listNamespaces`: the same listing as ratelimit.listNamespaces, with the page inside
 * `data` as this family's listOverrides answers it (`{namespaces, cursor?}`, no `pagination`).
 */
import { t } from "elysia";
import { ok } from "../../../http/envelope.ts";
import { optionalObjectBody } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { LIST_NAMESPACES_DESCRIPTION, ListNamespacesBody, NamespaceData } from "../ratelimit/schemas.ts";
import { documented } from "../../../http/responses.ts";

const NamespacePage = t.Object({
  namespaces: t.Array(NamespaceData, { description: "A page of the workspace's namespaces" }),
  cursor: t.Optional(t.String({ description: "Pass as `cursor` for the next page; absent on the last page. A page may hold fewer namespaces than `limit` and still have a next page" })),
});

export const ratelimitsListNamespacesRoute = (deps: RouteDeps) => operation({
  path: "/v2/ratelimits.listNamespaces",
  example: {limit: 100},
  body: ListNamespacesBody,
  detail: {
    summary: "List rate-limit namespaces (plural path)", tags: ["ratelimits"],
    description: `${LIST_NAMESPACES_DESCRIPTION} \`data: {namespaces, cursor?}\`; the cursor is left out on the last page.`,
    ...documented({ data: NamespacePage }),
  },
  handle: async (body, request, info) => {
    const page = await deps.services.ratelimits.listNamespaces(deps.principal(request, info), optionalObjectBody(body, "/v2/ratelimits.listNamespaces"));
    return ok({ namespaces: page.items, ...(page.cursor !== undefined ? { cursor: page.cursor } : {}) });
  },
});
