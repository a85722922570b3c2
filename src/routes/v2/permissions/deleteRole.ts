import { Elysia } from "elysia";
import { ok } from "../../../http/envelope.ts";
import { strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { RoleRef } from "./schemas.ts";
import { documented, EmptyData } from "../../../http/responses.ts";

export const deleteRoleRoute = (deps: RouteDeps) =>
  new Elysia().post("/v2/permissions.deleteRole", ({ body, request }) => ok(deps.services.rbac.deleteRole(deps.principal(request), body)), {
    body: strictObject({ role: RoleRef }),
    detail: {
      summary: "Delete a role", tags: ["permissions"], description: "By id or name; also removes it from every key. Needs `rbac.*.delete_role`.",
      ...documented({ data: EmptyData, errors: ["role_not_found"] }),
    },
  });
