/** `POST /v2/permissions.listRoles`: list roles. */
import { t } from "elysia";
import { okPage } from "../../../http/envelope.ts";
import { optionalObjectBody, strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { listBody } from "./schemas.ts";
import { documented } from "../../../http/responses.ts";
import { ListOf, RoleData } from "../../../http/views.ts";

export const listRolesRoute = (deps: RouteDeps) => operation({
  path: "/v2/permissions.listRoles",
  example: {limit: 100},
  body: t.Optional(strictObject(listBody("id, name or description"), "`{}` or an empty body lists the first page")),
  detail: {
    summary: "List roles", tags: ["permissions"], description: "Paginated by role id; each role with its permissions. Needs `rbac.*.read_role`.",
    ...documented({ data: ListOf(RoleData, "Roles with their permissions, by id"), paged: true }),
  },
  handle: async (body, request, info) => {
    const query = optionalObjectBody(body, "/v2/permissions.listRoles");
    const page = await deps.services.rbac.listRoles(deps.principal(request, info), query);
    return okPage(page.items, page.cursor);
  },
});
