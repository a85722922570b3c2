/** `POST /v2/permissions.createPermission`: create a permission. */
import { t } from "elysia";
import { ok } from "../../../http/envelope.ts";
import { strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { Description, PermissionSlug } from "./schemas.ts";
import { documented } from "../../../http/responses.ts";

export const createPermissionRoute = (deps: RouteDeps) => operation({
  path: "/v2/permissions.createPermission",
  example: {name: "Read documents", slug: "documents.read", description: "May read every document"},
  body: strictObject({
    name: t.String({ minLength: 1, maxLength: 512, description: "Unique name in the workspace (case-insensitive)" }),
    slug: PermissionSlug,
    description: t.Optional(Description),
  }),
  detail: {
    summary: "Create a permission", tags: ["permissions"], description: "409 when the name or slug exists (case-insensitive). Needs `rbac.*.create_permission`.",
    ...documented({ data: t.Object({ permissionId: t.String({ description: "The new permission's id (`perm_…`)" }) }), errors: ["permission_already_exists", "workspace_quota_exceeded"] }),
  },
  handle: async (body, request, info) => ok(await deps.services.rbac.createPermission(deps.principal(request, info), body)),
});
