/** `POST /v2/identities.listIdentities`: list identities. */
import { t } from "elysia";
import { okPage } from "../../../http/envelope.ts";
import { Cursor, PageLimit, optionalObjectBody, strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { documented } from "../../../http/responses.ts";
import { IdentityData, ListOf } from "../../../http/views.ts";

export const listIdentitiesRoute = (deps: RouteDeps) => operation({
  path: "/v2/identities.listIdentities",
  example: {limit: 100},
  body: t.Optional(strictObject({
    limit: t.Optional(PageLimit),
    cursor: t.Optional(Cursor),
    search: t.Optional(t.String({ maxLength: 256, description: "Case-insensitive substring of the id or externalId" })),
  }, "`{}` or an empty body lists the first page")),
  detail: {
    summary: "List identities", tags: ["identities"], description: "Live identities, paginated by id. Needs `identity.*.read_identity` (or a per-identity grant for every row).",
    ...documented({ data: ListOf(IdentityData, "Live identities, by id"), paged: true }),
  },
  handle: async (body, request, info) => {
    const query = optionalObjectBody(body, "/v2/identities.listIdentities");
    const page = await deps.services.identities.listIdentities(deps.principal(request, info), query);
    return okPage(page.items, page.cursor);
  },
});
