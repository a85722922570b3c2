/** `POST /v2/keys.rerollKey`: replace a key. */
import { ok } from "../../../http/envelope.ts";
import { Int, KeyId, strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { documented } from "../../../http/responses.ts";
import { NewKeyData } from "../../../http/views.ts";

export const rerollKeyRoute = (deps: RouteDeps) => operation({
  path: "/v2/keys.rerollKey",
  example: {keyId: "key_1234", expiration: 86400000},
  body: strictObject({
    keyId: KeyId,
    expiration: Int({ minimum: 0, maximum: 4102444800000, description: "Milliseconds until the old key expires (rounded up to a whole minute); 0 expires it now" }),
  }),
  detail: {
    summary: "Replace a key",
    tags: ["keys"],
    description: "A new key with the old one's settings; the old key expires later. Needs `create_key` (and `encrypt_key` for a recoverable key) on the key's API, and `rbac.*.add_permission_to_key` / `rbac.*.add_role_to_key` when the key holds direct permissions / roles.",
    ...documented({ data: NewKeyData, errors: ["key_not_found", "key_space_not_found", "precondition_failed", "workspace_quota_exceeded"] }),
  },
  handle: async (body, request, info) => ok(await deps.services.keys.rerollKey(deps.principal(request, info), body)),
});
