/** `POST /v2/apis.getApi`: get an API. */
import { t } from "elysia";
import { ok } from "../../../http/envelope.ts";
import { ApiId, strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { documented } from "../../../http/responses.ts";

export const getApiRoute = (deps: RouteDeps) => operation({
  path: "/v2/apis.getApi",
  example: {apiId: "api_1234"},
  body: strictObject({ apiId: ApiId }),
  detail: {
    summary: "Get an API", tags: ["apis"], description: "Needs `api.*.read_api` or `api.<apiId>.read_api`.",
    ...documented({ data: t.Object({ id: t.String({ description: "API id (`api_…`)" }), name: t.String({ description: "The API's name" }) }), errors: ["api_not_found"] }),
  },
  handle: (body, request, info) => ok(deps.services.apis.getApi(deps.principal(request, info), body)),
});
