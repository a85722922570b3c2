/** `POST /v2/keys.removeRoles`: remove roles from a key. */
import { ok } from "../../../http/envelope.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { keyRolesBody } from "./schemas.ts";
import { documented } from "../../../http/responses.ts";
import { ListOf, RoleData } from "../../../http/views.ts";

export const removeRolesRoute = (deps: RouteDeps) => operation({
  path: "/v2/keys.removeRoles",
  example: {keyId: "key_1234", roles: ["editor"]},
  body: keyRolesBody(1, "Names of existing roles"),
  detail: {
    summary: "Remove roles from a key", tags: ["keys"], description: "Answers the key's remaining roles, by name. Needs `update_key` on the key's API and `rbac.*.remove_role_from_key`.",
    ...documented({ data: ListOf(RoleData, "The key's roles afterwards"), errors: ["key_not_found", "role_not_found"] }),
  },
  handle: async (body, request, info) => ok(await deps.services.keys.removeRoles(deps.principal(request, info), body)),
});
