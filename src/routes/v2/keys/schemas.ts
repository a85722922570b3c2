/** Request-schema pieces shared by the keys.* management routes. */
import { t } from "elysia";
import { Int, KeyId, MAX_SAFE_INT, PermissionSlug, Refill, RoleName, strictObject } from "../../../http/schemas.ts";

/** `credits` of keys.updateKey: null makes the key unlimited; each part is left out, null or a value. */
export const UpdateCredits = t.Union([
  strictObject({
    remaining: t.Optional(t.Union([Int({ minimum: 0, maximum: MAX_SAFE_INT }), t.Null()], { description: "Remaining uses; null for unlimited (also clears the refill)" })),
    refill: t.Optional(t.Union([Refill, t.Null()], { description: "Refill settings; null removes them" })),
  }),
  t.Null(),
], { description: "Credit settings; null for unlimited usage" });

/** Body of add/remove/setPermissions; `minItems` 1 for add and remove, 0 for set. */
export const keyPermissionsBody = (minItems: number, description: string) => strictObject({
  keyId: KeyId,
  permissions: t.Array(PermissionSlug, { minItems, maxItems: 1000, description }),
});

/** Body of add/remove/setRoles; `minItems` 1 for add and remove, 0 for set. */
export const keyRolesBody = (minItems: number, description: string) => strictObject({
  keyId: KeyId,
  roles: t.Array(RoleName, { minItems, maxItems: 100, description }),
});
