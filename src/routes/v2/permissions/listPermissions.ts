/** `POST /v2/permissions.listPermissions`: list permissions. */
import { t } from "elysia";
import { okPage } from "../../../http/envelope.ts";
import { optionalObjectBody, strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { listBody } from "./schemas.ts";
import { documented } from "../../../http/responses.ts";
import { ListOf, PermissionData } from "../../../http/views.ts";

export const listPermissionsRoute = (deps: RouteDeps) => operation({
  path: "/v2/permissions.listPermissions",
  example: {limit: 100},
  body: t.Optional(strictObject(listBody("id, name, slug or description"), "`{}` or an empty body lists the first page")),
  detail: {
    summary: "List permissions", tags: ["permissions"], description: "Paginated by permission id. Needs `rbac.*.read_permission`.",
    ...documented({ data: ListOf(PermissionData, "Permissions, by id"), paged: true }),
  },
  handle: async (body, request, info) => {
    const query = optionalObjectBody(body, "/v2/permissions.listPermissions");
    const page = await deps.services.rbac.listPermissions(deps.principal(request, info), query);
    return okPage(page.items, page.cursor);
  },
});
