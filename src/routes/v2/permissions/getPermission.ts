/** `POST /v2/permissions.getPermission`: get a permission. */
import { ok } from "../../../http/envelope.ts";
import { strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { PermissionRef } from "./schemas.ts";
import { documented } from "../../../http/responses.ts";
import { PermissionData } from "../../../http/views.ts";

export const getPermissionRoute = (deps: RouteDeps) => operation({
  path: "/v2/permissions.getPermission",
  example: {permission: "documents.read"},
  body: strictObject({ permission: PermissionRef }),
  detail: {
    summary: "Get a permission", tags: ["permissions"], description: "By id or slug. Needs `rbac.*.read_permission`.",
    ...documented({ data: PermissionData, errors: ["permission_not_found"] }),
  },
  handle: async (body, request, info) => ok(await deps.services.rbac.getPermission(deps.principal(request, info), body)),
});
