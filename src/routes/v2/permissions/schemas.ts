/** Request-schema pieces of the permissions.* routes (upstream's limits, which differ from a key's). */
import { t } from "elysia";
import { PageLimit } from "../../../http/schemas.ts";

const SLUG_PATTERN = "^[a-zA-Z0-9_:\\-\\.\\*]+$";

export const PermissionSlug = t.String({ minLength: 1, maxLength: 128, pattern: SLUG_PATTERN, description: "Permission slug: letters, digits, `_ : - . *`" });
export const PermissionRef = t.String({ minLength: 1, maxLength: 128, pattern: SLUG_PATTERN, description: "Permission id (`perm_…`) or slug" });
/** A role's name has the form in which keys name their roles (keys.createKey, addRoles…), so every role can be assigned. */
export const NewRoleName = t.String({ minLength: 1, maxLength: 100, pattern: SLUG_PATTERN, description: "Unique name in the workspace (case-insensitive): 1 to 100 letters, digits or `_ : - . *`" });
export const RoleRef = t.String({ minLength: 1, maxLength: 128, description: "Role id (`role_…`) or name" });
export const Description = t.String({ maxLength: 512, description: "What it grants; for your team, never shown to end users" });

/** The body of listPermissions and listRoles; `{}` lists the first page. */
export const listBody = (searched: string) => ({
  limit: t.Optional(PageLimit),
  cursor: t.Optional(t.String({ maxLength: 1024, description: "Cursor from the previous page; empty or left out for the first page" })),
  search: t.Optional(t.String({ maxLength: 256, description: `Case-insensitive substring of the ${searched}` })),
});
