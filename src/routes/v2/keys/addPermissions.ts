/** `POST /v2/keys.addPermissions`: add permissions to a key. */
import { ok } from "../../../http/envelope.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { keyPermissionsBody } from "./schemas.ts";
import { documented } from "../../../http/responses.ts";
import { ListOf, PermissionData } from "../../../http/views.ts";

export const addPermissionsRoute = (deps: RouteDeps) => operation({
  path: "/v2/keys.addPermissions",
  example: {keyId: "key_1234", permissions: ["documents.read"]},
  body: keyPermissionsBody(1, "Permission slugs; missing ones are created (needs `rbac.*.create_permission`)"),
  detail: {
    summary: "Add permissions to a key", tags: ["keys"], description: "Answers the key's direct permissions. Needs `update_key` on the key's API and `rbac.*.add_permission_to_key`.",
    ...documented({ data: ListOf(PermissionData, "The key's direct permissions afterwards"), errors: ["key_not_found", "permission_already_exists", "workspace_quota_exceeded"] }),
  },
  handle: async (body, request, info) => ok(await deps.services.keys.addPermissions(deps.principal(request, info), body)),
});
