/** `POST /v2/keys.setPermissions`: replace a key's permissions. */
import { ok } from "../../../http/envelope.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { keyPermissionsBody } from "./schemas.ts";
import { documented } from "../../../http/responses.ts";
import { ListOf, PermissionData } from "../../../http/views.ts";

export const setPermissionsRoute = (deps: RouteDeps) => operation({
  path: "/v2/keys.setPermissions",
  example: {keyId: "key_1234", permissions: ["documents.read", "documents.write"]},
  body: keyPermissionsBody(0, "The complete set of direct permission slugs; [] removes all; missing ones are created (needs `rbac.*.create_permission`)"),
  detail: {
    summary: "Replace a key's permissions", tags: ["keys"], description: "Answers the key's direct permissions. Needs `update_key` on the key's API, `rbac.*.add_permission_to_key` and `rbac.*.remove_permission_from_key`.",
    ...documented({ data: ListOf(PermissionData, "The key's direct permissions afterwards"), errors: ["key_not_found", "permission_already_exists", "workspace_quota_exceeded"] }),
  },
  handle: async (body, request, info) => ok(await deps.services.keys.setPermissions(deps.principal(request, info), body)),
});
