/** `POST /v2/keys.addRoles`: add roles to a key. */
import { ok } from "../../../http/envelope.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { keyRolesBody } from "./schemas.ts";
import { documented } from "../../../http/responses.ts";
import { ListOf, RoleData } from "../../../http/views.ts";

export const addRolesRoute = (deps: RouteDeps) => operation({
  path: "/v2/keys.addRoles",
  example: {keyId: "key_1234", roles: ["editor"]},
  body: keyRolesBody(1, "Names of existing roles"),
  detail: {
    summary: "Add roles to a key", tags: ["keys"], description: "Answers the key's roles, by name. Needs `update_key` on the key's API and `rbac.*.add_role_to_key`.",
    ...documented({ data: ListOf(RoleData, "The key's roles afterwards"), errors: ["key_not_found", "role_not_found", "workspace_quota_exceeded"] }),
  },
  handle: async (body, request, info) => ok(await deps.services.keys.addRoles(deps.principal(request, info), body)),
});
