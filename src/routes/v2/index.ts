/** Every /v2 route, composed. One file per URL under this folder. */
import { Elysia, type AnyElysia } from "elysia";
import type { HotRoute } from "../../http/hot-routes.ts";
import type { RouteDeps } from "../deps.ts";
import { createApiRoute } from "./apis/createApi.ts";
import { deleteApiRoute } from "./apis/deleteApi.ts";
import { getApiRoute } from "./apis/getApi.ts";
import { listKeysRoute } from "./apis/listKeys.ts";
import { listApisRoute } from "./apis/listApis.ts";
import { createIdentityRoute } from "./identities/createIdentity.ts";
import { deleteIdentityRoute } from "./identities/deleteIdentity.ts";
import { getIdentityRoute } from "./identities/getIdentity.ts";
import { listIdentitiesRoute } from "./identities/listIdentities.ts";
import { updateIdentityRoute } from "./identities/updateIdentity.ts";
import { createKeyRoute } from "./keys/createKey.ts";
import { getKeyRoute } from "./keys/getKey.ts";
import { verifyKeyOperation, verifyKeyRoute } from "./keys/verifyKey.ts";
import { whoamiRoute } from "./keys/whoami.ts";
import { updateKeyRoute } from "./keys/updateKey.ts";
import { deleteKeyRoute } from "./keys/deleteKey.ts";
import { updateCreditsRoute } from "./keys/updateCredits.ts";
import { addPermissionsRoute } from "./keys/addPermissions.ts";
import { removePermissionsRoute } from "./keys/removePermissions.ts";
import { setPermissionsRoute } from "./keys/setPermissions.ts";
import { addRolesRoute } from "./keys/addRoles.ts";
import { removeRolesRoute } from "./keys/removeRoles.ts";
import { setRolesRoute } from "./keys/setRoles.ts";
import { rerollKeyRoute } from "./keys/rerollKey.ts";
import { createPermissionRoute } from "./permissions/createPermission.ts";
import { createRoleRoute } from "./permissions/createRole.ts";
import { deletePermissionRoute } from "./permissions/deletePermission.ts";
import { deleteRoleRoute } from "./permissions/deleteRole.ts";
import { getPermissionRoute } from "./permissions/getPermission.ts";
import { getRoleRoute } from "./permissions/getRole.ts";
import { listPermissionsRoute } from "./permissions/listPermissions.ts";
import { listRolesRoute } from "./permissions/listRoles.ts";
import { setRolePermissionsRoute } from "./permissions/setRolePermissions.ts";
import { limitOperation, RATELIMIT_LIMIT_PATH, ratelimitLimitRoute } from "./ratelimit/limit.ts";
import { ratelimitMultiLimitRoute } from "./ratelimit/multiLimit.ts";
import { ratelimitSetOverrideRoute } from "./ratelimit/setOverride.ts";
import { ratelimitGetOverrideRoute } from "./ratelimit/getOverride.ts";
import { ratelimitListOverridesRoute } from "./ratelimit/listOverrides.ts";
import { ratelimitListNamespacesRoute } from "./ratelimit/listNamespaces.ts";
import { ratelimitDeleteOverrideRoute } from "./ratelimit/deleteOverride.ts";
import { RATELIMITS_LIMIT_PATH, ratelimitsLimitRoute } from "./ratelimits/limit.ts";
import { ratelimitsSetOverrideRoute } from "./ratelimits/setOverride.ts";
import { ratelimitsGetOverrideRoute } from "./ratelimits/getOverride.ts";
import { ratelimitsListOverridesRoute } from "./ratelimits/listOverrides.ts";
import { ratelimitsListNamespacesRoute } from "./ratelimits/listNamespaces.ts";
import { ratelimitsDeleteOverrideRoute } from "./ratelimits/deleteOverride.ts";
import { getLogRoute } from "./audit/getLog.ts";
import { listLogsRoute } from "./audit/listLogs.ts";
import { getVerificationsRoute } from "./analytics/getVerifications.ts";
import { rootKeysWhoamiRoute } from "./rootKeys/whoami.ts";

/** The routes on the request path of our users' own APIs, answered by the lane in http/hot-routes.ts. */
export const hotV2Routes = (deps: RouteDeps): HotRoute[] => [
  verifyKeyOperation(deps),
  limitOperation(deps, RATELIMIT_LIMIT_PATH),
  limitOperation(deps, RATELIMITS_LIMIT_PATH),
] as HotRoute[];

/** Typed as AnyElysia: nothing needs the routes' types, and carrying them through 45 `.use` calls exhausts tsc. */
export const v2Routes = (deps: RouteDeps): AnyElysia =>
  new Elysia()
    .use(createApiRoute(deps))
    .use(getApiRoute(deps))
    .use(deleteApiRoute(deps))
    .use(listKeysRoute(deps))
    .use(listApisRoute(deps))
    .use(createKeyRoute(deps))
    .use(getKeyRoute(deps))
    .use(verifyKeyRoute(deps))
    .use(whoamiRoute(deps))
    .use(updateKeyRoute(deps))
    .use(deleteKeyRoute(deps))
    .use(updateCreditsRoute(deps))
    .use(addPermissionsRoute(deps))
    .use(removePermissionsRoute(deps))
    .use(setPermissionsRoute(deps))
    .use(addRolesRoute(deps))
    .use(removeRolesRoute(deps))
    .use(setRolesRoute(deps))
    .use(rerollKeyRoute(deps))
    .use(createIdentityRoute(deps))
    .use(getIdentityRoute(deps))
    .use(listIdentitiesRoute(deps))
    .use(updateIdentityRoute(deps))
    .use(deleteIdentityRoute(deps))
    .use(ratelimitLimitRoute(deps))
    .use(ratelimitMultiLimitRoute(deps))
    .use(ratelimitSetOverrideRoute(deps))
    .use(ratelimitGetOverrideRoute(deps))
    .use(ratelimitListOverridesRoute(deps))
    .use(ratelimitListNamespacesRoute(deps))
    .use(ratelimitDeleteOverrideRoute(deps))
    .use(ratelimitsLimitRoute(deps))
    .use(ratelimitsSetOverrideRoute(deps))
    .use(ratelimitsGetOverrideRoute(deps))
    .use(ratelimitsListOverridesRoute(deps))
    .use(ratelimitsListNamespacesRoute(deps))
    .use(ratelimitsDeleteOverrideRoute(deps))
    .use(createPermissionRoute(deps))
    .use(getPermissionRoute(deps))
    .use(listPermissionsRoute(deps))
    .use(deletePermissionRoute(deps))
    .use(createRoleRoute(deps))
    .use(getRoleRoute(deps))
    .use(listRolesRoute(deps))
    .use(deleteRoleRoute(deps))
    .use(setRolePermissionsRoute(deps))
    .use(getLogRoute(deps))
    .use(listLogsRoute(deps))
    .use(getVerificationsRoute(deps))
    .use(rootKeysWhoamiRoute(deps));
