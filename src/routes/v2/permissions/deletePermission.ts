/** `POST /v2/permissions.deletePermission`: delete a permission. */
import { ok } from "../../../http/envelope.ts";
import { strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { PermissionRef } from "./schemas.ts";
import { documented, EmptyData } from "../../../http/responses.ts";

export const deletePermissionRoute = (deps: RouteDeps) => operation({
  path: "/v2/permissions.deletePermission",
  example: {permission: "documents.read"},
  body: strictObject({ permission: PermissionRef }),
  detail: {
    summary: "Delete a permission", tags: ["permissions"], description: "By id or slug; also removes it from every role and key. Needs `rbac.*.delete_permission`.",
    ...documented({ data: EmptyData, errors: ["permission_not_found"] }),
  },
  handle: async (body, request, info) => ok(await deps.services.rbac.deletePermission(deps.principal(request, info), body)),
});
