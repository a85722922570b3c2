/** `POST /v2/keys.setRoles`: replace a key's roles. */
import { ok } from "../../../http/envelope.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { keyRolesBody } from "./schemas.ts";
import { documented } from "../../../http/responses.ts";
import { ListOf, RoleData } from "../../../http/views.ts";

export const setRolesRoute = (deps: RouteDeps) => operation({
  path: "/v2/keys.setRoles",
  example: {keyId: "key_1234", roles: ["editor"]},
  body: keyRolesBody(0, "The complete set of role names; [] removes all"),
  detail: {
    summary: "Replace a key's roles", tags: ["keys"], description: "Answers the key's roles, by name. Needs `update_key` on the key's API, `rbac.*.add_role_to_key` and `rbac.*.remove_role_from_key`.",
    ...documented({ data: ListOf(RoleData, "The key's roles afterwards"), errors: ["key_not_found", "role_not_found", "workspace_quota_exceeded"] }),
  },
  handle: async (body, request, info) => ok(await deps.services.keys.setRoles(deps.principal(request, info), body)),
});
