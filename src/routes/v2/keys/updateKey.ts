/** `POST /v2/keys.updateKey`: update a key. */
import { t } from "elysia";
import { ok } from "../../../http/envelope.ts";
import { ExternalId, KeyId, Meta, PermissionSlug, RatelimitConfigBody, RoleName, UnixMs, strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { UpdateCredits } from "./schemas.ts";
import { documented, EmptyData } from "../../../http/responses.ts";

export const updateKeyRoute = (deps: RouteDeps) => operation({
  path: "/v2/keys.updateKey",
  example: {keyId: "key_1234", name: "Acme's renamed key", enabled: true},
  body: strictObject({
    keyId: KeyId,
    name: t.Optional(t.Union([t.String({ minLength: 1, maxLength: 255 }), t.Null()], { description: "New name; null removes it" })),
    externalId: t.Optional(t.Union([ExternalId, t.Null()], { description: "Owner to link (created when missing); null unlinks" })),
    meta: t.Optional(t.Union([Meta, t.Null()], { description: "New metadata; null removes it" })),
    expires: t.Optional(t.Union([UnixMs("Expiry, Unix ms"), t.Null()], { description: "Expiry, Unix ms; null: never expires" })),
    credits: t.Optional(UpdateCredits),
    ratelimits: t.Optional(t.Array(RatelimitConfigBody, { maxItems: 50, description: "Replaces the key's limits by name; [] removes all" })),
    enabled: t.Optional(t.Boolean({ description: "false makes every verification answer DISABLED" })),
    roles: t.Optional(t.Array(RoleName, { maxItems: 100, description: "Replaces the key's roles; each must exist (needs `rbac.*.add_role_to_key` and `rbac.*.remove_role_from_key`)" })),
    permissions: t.Optional(t.Array(PermissionSlug, { maxItems: 1000, description: "Replaces the direct permissions (needs `rbac.*.add_permission_to_key` and `rbac.*.remove_permission_from_key`); missing ones are created (needs `rbac.*.create_permission`)" })),
  }),
  detail: {
    summary: "Update a key",
    tags: ["keys"],
    description: "A field left out is unchanged, null clears it, a value sets it. Needs `update_key` on the key's API, and for `roles` / `permissions` the grants of keys.setRoles / keys.setPermissions.",
    ...documented({ data: EmptyData, errors: ["key_not_found", "role_not_found", "permission_already_exists", "workspace_quota_exceeded"] }),
  },
  handle: async (body, request, info) => ok(await deps.services.keys.updateKey(deps.principal(request, info), body)),
});
