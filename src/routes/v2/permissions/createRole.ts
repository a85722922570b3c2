/** `POST /v2/permissions.createRole`: create a role. */
import { t } from "elysia";
import { ok } from "../../../http/envelope.ts";
import { strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { Description, NewRoleName, PermissionSlug } from "./schemas.ts";
import { documented } from "../../../http/responses.ts";

export const createRoleRoute = (deps: RouteDeps) => operation({
  path: "/v2/permissions.createRole",
  example: {name: "editor", description: "Reads and writes documents", permissions: ["documents.read", "documents.write"]},
  body: strictObject({
    name: NewRoleName,
    description: t.Optional(Description),
    permissions: t.Optional(t.Array(PermissionSlug, { maxItems: 1000, description: "Permission slugs to attach; missing ones are created" })),
  }),
  detail: {
    summary: "Create a role",
    tags: ["permissions"],
    description: "409 when the name exists (case-insensitive). Needs `rbac.*.create_role`; with `permissions` also `add_permission_to_role`, and `create_permission` when one does not exist yet.",
    ...documented({ data: t.Object({ roleId: t.String({ description: "The new role's id (`role_…`)" }) }), errors: ["role_already_exists", "permission_already_exists", "workspace_quota_exceeded"] }),
  },
  handle: async (body, request, info) => ok(await deps.services.rbac.createRole(deps.principal(request, info), body)),
});
