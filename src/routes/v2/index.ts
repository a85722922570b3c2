/** Every /v2 operation, in the order the API document lists them. One file per URL under this folder. */
import type { Operation } from "../../http/operation.ts";
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
import { verifyKeyRoute } from "./keys/verifyKey.ts";
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
import { ratelimitLimitRoute } from "./ratelimit/limit.ts";
import { ratelimitMultiLimitRoute } from "./ratelimit/multiLimit.ts";
import { ratelimitSetOverrideRoute } from "./ratelimit/setOverride.ts";
import { ratelimitGetOverrideRoute } from "./ratelimit/getOverride.ts";
import { ratelimitListOverridesRoute } from "./ratelimit/listOverrides.ts";
import { ratelimitListNamespacesRoute } from "./ratelimit/listNamespaces.ts";
import { ratelimitDeleteOverrideRoute } from "./ratelimit/deleteOverride.ts";
import { ratelimitsLimitRoute } from "./ratelimits/limit.ts";
import { ratelimitsSetOverrideRoute } from "./ratelimits/setOverride.ts";
import { ratelimitsGetOverrideRoute } from "./ratelimits/getOverride.ts";
import { ratelimitsListOverridesRoute } from "./ratelimits/listOverrides.ts";
import { ratelimitsListNamespacesRoute } from "./ratelimits/listNamespaces.ts";
import { ratelimitsDeleteOverrideRoute } from "./ratelimits/deleteOverride.ts";
import { getLogRoute } from "./audit/getLog.ts";
import { listLogsRoute } from "./audit/listLogs.ts";
import { getVerificationsRoute } from "./analytics/getVerifications.ts";
import { rootKeysWhoamiRoute } from "./rootKeys/whoami.ts";

export const v2Operations = (deps: RouteDeps): Operation[] => [
  createApiRoute(deps),
  getApiRoute(deps),
  deleteApiRoute(deps),
  listKeysRoute(deps),
  listApisRoute(deps),
  createKeyRoute(deps),
  getKeyRoute(deps),
  verifyKeyRoute(deps),
  whoamiRoute(deps),
  updateKeyRoute(deps),
  deleteKeyRoute(deps),
  updateCreditsRoute(deps),
  addPermissionsRoute(deps),
  removePermissionsRoute(deps),
  setPermissionsRoute(deps),
  addRolesRoute(deps),
  removeRolesRoute(deps),
  setRolesRoute(deps),
  rerollKeyRoute(deps),
  createIdentityRoute(deps),
  getIdentityRoute(deps),
  listIdentitiesRoute(deps),
  updateIdentityRoute(deps),
  deleteIdentityRoute(deps),
  ratelimitLimitRoute(deps),
  ratelimitMultiLimitRoute(deps),
  ratelimitSetOverrideRoute(deps),
  ratelimitGetOverrideRoute(deps),
  ratelimitListOverridesRoute(deps),
  ratelimitListNamespacesRoute(deps),
  ratelimitDeleteOverrideRoute(deps),
  ratelimitsLimitRoute(deps),
  ratelimitsSetOverrideRoute(deps),
  ratelimitsGetOverrideRoute(deps),
  ratelimitsListOverridesRoute(deps),
  ratelimitsListNamespacesRoute(deps),
  ratelimitsDeleteOverrideRoute(deps),
  createPermissionRoute(deps),
  getPermissionRoute(deps),
  listPermissionsRoute(deps),
  deletePermissionRoute(deps),
  createRoleRoute(deps),
  getRoleRoute(deps),
  listRolesRoute(deps),
  deleteRoleRoute(deps),
  setRolePermissionsRoute(deps),
  getLogRoute(deps),
  listLogsRoute(deps),
  getVerificationsRoute(deps),
  rootKeysWhoamiRoute(deps),
];
