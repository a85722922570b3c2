/**
 * `permissions.setRolePermissions`. The role is `role`, as in getRole and deleteRole; `roleId`, the
 * name it had first, is still accepted so that callers written against it keep working.
 */
import { t } from "elysia";
import { invalidInput } from "../../../errors/app-error.ts";
import { ok } from "../../../http/envelope.ts";
import { strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { PermissionSlug } from "./schemas.ts";
import { documented } from "../../../http/responses.ts";
import { ListOf, PermissionData } from "../../../http/views.ts";

export const setRolePermissionsRoute = (deps: RouteDeps) => operation({
  path: "/v2/permissions.setRolePermissions",
  example: {role: "editor", permissions: ["documents.read"]},
  body: strictObject({
    role: t.Optional(t.String({ minLength: 1, maxLength: 128, description: "Role id (`role_…`) or name; required unless `roleId` is given" })),
    roleId: t.Optional(t.String({ minLength: 1, maxLength: 128, description: "The older name of `role`, still accepted; give one of the two" })),
    permissions: t.Array(PermissionSlug, { maxItems: 1000, description: "The complete set of permission slugs; [] removes all; missing ones are created (needs `rbac.*.create_permission`)" }),
  }),
  detail: {
    summary: "Replace a role's permissions",
    tags: ["permissions"],
    description: "Answers the role's permissions; keys holding the role see the change at their next verification. Needs `rbac.*.add_permission_to_role` and `rbac.*.remove_permission_from_role`.",
    ...documented({ data: ListOf(PermissionData, "The role's permissions afterwards"), errors: ["role_not_found", "permission_already_exists", "workspace_quota_exceeded"] }),
  },
  handle: async (body, request, info) => {
    const principal = deps.principal(request, info);
    const role = body.role ?? body.roleId;
    if (role === undefined || (body.role !== undefined && body.roleId !== undefined)) {
      throw invalidInput("body.role", "Give the role as `role` (or `roleId`, its older name), exactly once.");
    }
    return ok(await deps.services.rbac.setRolePermissions(principal, { role, permissions: body.permissions }));
  },
});
