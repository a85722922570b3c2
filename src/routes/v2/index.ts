/** Every /v2 route, composed. One file per URL under this folder. */
import { Elysia } from "elysia";
import type { RouteDeps } from "../deps.ts";
import { createApiRoute } from "./apis/createApi.ts";
import { deleteApiRoute } from "./apis/deleteApi.ts";
import { getApiRoute } from "./apis/getApi.ts";
import { listKeysRoute } from "./apis/listKeys.ts";
import { createKeyRoute } from "./keys/createKey.ts";
import { getKeyRoute } from "./keys/getKey.ts";
import { verifyKeyRoute } from "./keys/verifyKey.ts";

export const v2Routes = (deps: RouteDeps) =>
  new Elysia()
    .use(createApiRoute(deps))
    .use(getApiRoute(deps))
    .use(deleteApiRoute(deps))
    .use(listKeysRoute(deps))
    .use(createKeyRoute(deps))
    .use(getKeyRoute(deps))
    .use(verifyKeyRoute(deps));
