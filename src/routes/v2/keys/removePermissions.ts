/** `POST /v2/keys.removePermissions`: remove permissions from a key. */
import { ok } from "../../../http/envelope.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { keyPermissionsBody } from "./schemas.ts";
import { documented } from "../../../http/responses.ts";
import { ListOf, PermissionData } from "../../../http/views.ts";

export const removePermissionsRoute = (deps: RouteDeps) => operation({
  path: "/v2/keys.removePermissions",
  example: {keyId: "key_1234", permissions: ["documents.read"]},
  body: keyPermissionsBody(1, "Permission slugs or ids"),
  detail: {
    summary: "Remove permissions from a key", tags: ["keys"], description: "Answers the key's remaining direct permissions. Needs `update_key` on the key's API and `rbac.*.remove_permission_from_key`.",
    ...documented({ data: ListOf(PermissionData, "The key's direct permissions afterwards"), errors: ["key_not_found", "permission_not_found"] }),
  },
  handle: async (body, request, info) => ok(await deps.services.keys.removePermissions(deps.principal(request, info), body)),
});
