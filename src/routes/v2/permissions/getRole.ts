/** `POST /v2/permissions.getRole`: get a role. */
import { ok } from "../../../http/envelope.ts";
import { strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { RoleRef } from "./schemas.ts";
import { documented } from "../../../http/responses.ts";
import { RoleData } from "../../../http/views.ts";

export const getRoleRoute = (deps: RouteDeps) => operation({
  path: "/v2/permissions.getRole",
  example: {role: "editor"},
  body: strictObject({ role: RoleRef }),
  detail: {
    summary: "Get a role", tags: ["permissions"], description: "By id or name, with its permissions. Needs `rbac.*.read_role`.",
    ...documented({ data: RoleData, errors: ["role_not_found"] }),
  },
  handle: async (body, request, info) => ok(await deps.services.rbac.getRole(deps.principal(request, info), body)),
});
