import { Elysia, t } from "elysia";
import { ok } from "../../../http/envelope.ts";
import { strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { PermissionSlug, RoleRef } from "./schemas.ts";

export const setRolePermissionsRoute = (deps: RouteDeps) =>
  new Elysia().post("/v2/permissions.setRolePermissions", ({ body, request }) => {
    const principal = deps.principal(request);
    return ok(deps.services.rbac.setRolePermissions(principal, { role: body.roleId, permissions: body.permissions }));
  }, {
    body: strictObject({
      roleId: RoleRef,
      permissions: t.Array(PermissionSlug, { maxItems: 1000, description: "The complete set of permission slugs; [] removes all; missing ones are created (needs `rbac.*.create_permission`)" }),
    }),
    detail: {
      summary: "Replace a role's permissions",
      tags: ["permissions"],
      description: "Answers the role's permissions; keys holding the role see the change at their next verification. Needs `rbac.*.add_permission_to_role` and `rbac.*.remove_permission_from_role`.",
    },
  });
