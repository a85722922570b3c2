/** `POST /v2/permissions.deleteRole`: delete a role. */
import { ok } from "../../../http/envelope.ts";
import { strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { RoleRef } from "./schemas.ts";
import { documented, EmptyData } from "../../../http/responses.ts";

export const deleteRoleRoute = (deps: RouteDeps) => operation({
  path: "/v2/permissions.deleteRole",
  example: {role: "editor"},
  body: strictObject({ role: RoleRef }),
  detail: {
    summary: "Delete a role", tags: ["permissions"], description: "By id or name; also removes it from every key. Needs `rbac.*.delete_role`.",
    ...documented({ data: EmptyData, errors: ["role_not_found"] }),
  },
  handle: async (body, request, info) => ok(await deps.services.rbac.deleteRole(deps.principal(request, info), body)),
});
