/** `POST /v2/apis.listApis`: a tollgate addition (upstream lists no APIs), used by the console to find the workspace's APIs. */
import { t } from "elysia";
import { okPage } from "../../../http/envelope.ts";
import { Cursor, PageLimit, optionalObjectBody, strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { documented } from "../../../http/responses.ts";

const DESCRIPTION = "A tollgate addition (upstream has no such route), used by the web console. The workspace's live APIs, "
  + "paginated by id, each with its `keySpaceId` (the `key_space_id` of its keys' rows in analytics.getVerifications). "
  + "Needs `api.*.read_api`; a key holding only `api.<apiId>.read_api` grants sees just those APIs, and a key that may "
  + "read no API gets 403.";

export const listApisRoute = (deps: RouteDeps) => operation({
  path: "/v2/apis.listApis",
  example: {limit: 100},
  body: t.Optional(strictObject({
    limit: t.Optional(PageLimit),
    cursor: t.Optional(Cursor),
    search: t.Optional(t.String({ maxLength: 256, description: "Case-insensitive substring of the id or name" })),
  }, "`{}` or an empty body lists the first page")),
  detail: {
    summary: "List APIs", tags: ["apis"], description: DESCRIPTION,
    ...documented({
      data: t.Array(t.Object({
        id: t.String({ description: "API id (`api_…`)" }),
        name: t.String({ description: "The API's name" }),
        keySpaceId: t.String({ description: "The `key_space_id` of the API's keys in analytics rows" }),
      })),
      paged: true,
    }),
  },
  handle: async (body, request, info) => {
    const page = await deps.services.apis.listApis(deps.principal(request, info), optionalObjectBody(body, "/v2/apis.listApis"));
    return okPage(page.items, page.cursor);
  },
});
