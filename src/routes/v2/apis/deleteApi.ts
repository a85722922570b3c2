import { Elysia } from "elysia";
import { ok } from "../../../http/envelope.ts";
import { ApiId, strictObject } from "../../../http/schemas.ts";
import type { RouteDeps } from "../../deps.ts";
import { documented, EmptyData } from "../../../http/responses.ts";

export const deleteApiRoute = (deps: RouteDeps) =>
  new Elysia().post("/v2/apis.deleteApi", ({ body, request }) => ok(deps.services.apis.deleteApi(deps.principal(request), body)), {
    body: strictObject({ apiId: ApiId }),
    detail: {
      summary: "Delete an API", tags: ["apis"], description: "Soft-deletes the API; its keys then verify as NOT_FOUND. Needs `delete_api`.",
      ...documented({ data: EmptyData, errors: ["api_not_found", "protected_resource"] }),
    },
  });
