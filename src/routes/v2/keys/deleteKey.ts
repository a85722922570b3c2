/** `POST /v2/keys.deleteKey`: delete a key. */
import { t } from "elysia";
import { ok } from "../../../http/envelope.ts";
import { KeyId, strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { documented, EmptyData } from "../../../http/responses.ts";

export const deleteKeyRoute = (deps: RouteDeps) => operation({
  path: "/v2/keys.deleteKey",
  example: {keyId: "key_1234"},
  body: strictObject({
    keyId: KeyId,
    permanent: t.Optional(t.Boolean({ description: "Remove the row for good instead of a soft delete (default false)" })),
  }),
  detail: {
    summary: "Delete a key", tags: ["keys"], description: "Its verifications answer NOT_FOUND from then on. Needs `delete_key` on the key's API.",
    ...documented({ data: EmptyData, errors: ["key_not_found"] }),
  },
  handle: async (body, request, info) => ok(await deps.services.keys.deleteKey(deps.principal(request, info), body)),
});
