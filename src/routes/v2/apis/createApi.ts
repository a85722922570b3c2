/** `POST /v2/apis.createApi`: create an API. */
import { t } from "elysia";
import { ok } from "../../../http/envelope.ts";
import { strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { documented } from "../../../http/responses.ts";

export const createApiRoute = (deps: RouteDeps) => operation({
  path: "/v2/apis.createApi",
  example: {name: "payments-production"},
  body: strictObject({ name: t.String({ minLength: 3, maxLength: 256, description: "Name of the API" }) }),
  detail: {
    summary: "Create an API", tags: ["apis"], description: "Needs `api.*.create_api`.",
    ...documented({ data: t.Object({ apiId: t.String({ description: "The new API's id (`api_…`)" }) }) }),
  },
  handle: (body, request, info) => ok(deps.services.apis.createApi(deps.principal(request, info), body)),
});
