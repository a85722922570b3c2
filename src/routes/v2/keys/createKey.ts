/** `POST /v2/keys.createKey`: create a key. */
import { t } from "elysia";
import { ok } from "../../../http/envelope.ts";
import { ApiId, Credits, Int, ExternalId, Meta, PermissionSlug, RatelimitConfigBody, RoleName, UnixMs, strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { documented } from "../../../http/responses.ts";
import { NewKeyData } from "../../../http/views.ts";

export const createKeyRoute = (deps: RouteDeps) => operation({
  path: "/v2/keys.createKey",
  example: {apiId: "api_1234", prefix: "sk", name: "Acme's production key", externalId: "user_1234", meta: {plan: "pro"}, credits: {remaining: 1000}},
  body: strictObject({
    apiId: ApiId,
    prefix: t.Optional(t.String({ minLength: 1, maxLength: 16, pattern: "^[a-zA-Z0-9_]+$", description: "Becomes `<prefix>_` at the start of the key" })),
    name: t.Optional(t.String({ minLength: 1, maxLength: 255, description: "A name for the key, shown in listings" })),
    byteLength: t.Optional(Int({ minimum: 16, maximum: 255, description: "Random bytes in the key (default 16)" })),
    externalId: t.Optional(ExternalId),
    meta: t.Optional(Meta),
    roles: t.Optional(t.Array(RoleName, { maxItems: 100, description: "Names of existing roles (needs `rbac.*.add_role_to_key`)" })),
    permissions: t.Optional(t.Array(PermissionSlug, { maxItems: 1000, description: "Permission slugs (needs `rbac.*.add_permission_to_key`); missing ones are created (needs `rbac.*.create_permission`)" })),
    expires: t.Optional(UnixMs("Expiry, Unix ms")),
    credits: t.Optional(Credits),
    ratelimits: t.Optional(t.Array(RatelimitConfigBody, { maxItems: 50, description: "Named rate limits of the key, at most 50" })),
    enabled: t.Optional(t.Boolean({ description: "Default true" })),
    recoverable: t.Optional(t.Boolean({ description: "Store the key encrypted so it can be read back (needs `encrypt_key`)" })),
  }),
  detail: {
    summary: "Create a key", tags: ["keys"], description: "Returns the key string once. Needs `create_key` on the API, and for `roles` / `permissions` the grants of keys.addRoles / keys.addPermissions.",
    ...documented({ data: NewKeyData, errors: ["api_not_found", "role_not_found", "permission_already_exists", "precondition_failed", "workspace_quota_exceeded"] }),
  },
  handle: async (body, request, info) => ok(await deps.services.keys.createKey(deps.principal(request, info), body)),
});
