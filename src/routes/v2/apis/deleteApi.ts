/** `POST /v2/apis.deleteApi`: delete an API. */
import { ok } from "../../../http/envelope.ts";
import { ApiId, strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { operation } from "../../../http/operation.ts";
import { documented, EmptyData } from "../../../http/responses.ts";

export const deleteApiRoute = (deps: RouteDeps) => operation({
  path: "/v2/apis.deleteApi",
  example: {apiId: "api_1234"},
  body: strictObject({ apiId: ApiId }),
  detail: {
    summary: "Delete an API", tags: ["apis"], description: "Soft-deletes the API; its keys then verify as NOT_FOUND. Needs `delete_api`.",
    ...documented({ data: EmptyData, errors: ["api_not_found", "protected_resource"] }),
  },
  handle: (body, request, info) => ok(deps.services.apis.deleteApi(deps.principal(request, info), body)),
});
