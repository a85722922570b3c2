/** `POST /v2/apis.listKeys`: list an API's keys. */
import { t } from "elysia";
import { okPage } from "../../../http/envelope.ts";
import { ApiId, Cursor, ExternalId, PageLimit, strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { documented } from "../../../http/responses.ts";
import { KeyData, ListOf } from "../../../http/views.ts";

export const listKeysRoute = (deps: RouteDeps) => operation({
  path: "/v2/apis.listKeys",
  example: {apiId: "api_1234", limit: 100},
  body: strictObject({
    apiId: ApiId,
    limit: t.Optional(PageLimit),
    cursor: t.Optional(Cursor),
    externalId: t.Optional(ExternalId),
    decrypt: t.Optional(t.Boolean({ description: "Return the plaintext of recoverable keys (needs `decrypt_key`)" })),
    revalidateKeysCache: t.Optional(t.Boolean({ description: "Accepted for compatibility; the cache is always current" })),
  }),
  detail: {
    summary: "List an API's keys", tags: ["apis"], description: "Paginated by key id. Needs `read_key` and `read_api` on the API.",
    ...documented({ data: ListOf(KeyData, "The API's keys, by key id"), paged: true, errors: ["api_not_found", "precondition_failed"] }),
  },
  handle: async (body, request, info) => {
    const principal = deps.principal(request, info);
    const page = await deps.services.keys.listKeys(principal, body);
    return okPage(page.items, page.cursor);
  },
});
