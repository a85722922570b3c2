/**
 * The hostile mix's data, made through the real services before tollgate starts: two workspaces
 * beside the soak's own, each holding only least-privilege root keys for the client. Two, so that
 * together they can reach the total rate-limit cap while each stays within its per-workspace one.
 * - `hostile_limits`: a namespace and a root key with only `ratelimit.*.limit` (it may not create
 *   namespaces, so the namespace is made here).
 * - `hostile_keys` (analytics on): an API with keys for ad-hoc limits, and root keys with only
 *   `api.*.verify_key`, with `api.*.create_key` + `api.*.verify_key`, and with only
 *   `api.*.read_analytics`; plus raw verification events, so that a three-way join of them never
 *   finishes before the deadline.
 */
import { buildServices, openDataDir } from "../../src/boot.ts";
import { loadConfig } from "../../src/config.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { silentLogger } from "../../src/lib/logger.ts";
import { ALL_GRANTS } from "../../src/services/auth/index.ts";
import type { Services } from "../../src/services/index.ts";
import { inTransaction } from "../../src/storage/db.ts";
import { answered } from "../../src/storage/work.ts";

export const HOSTILE_NAMESPACE = "hostile";
const AD_HOC_KEYS = 100;
const EVENTS = 2_000;

export interface HostileData {
  /** Root keys, each with only the grants its name says. */
  rootKeys: { limit: string; verify: string; createAndVerify: string; readAnalytics: string };
  /** The API the create-and-verify key makes big-meta keys in. */
  apiId: string;
  /** Keys verified with ad-hoc limits. */
  keys: string[];
}

const actor = { type: "cli" as const, id: "soak-hostile" };

/** A workspace and a root key with every grant in it, for seeding only. */
function adminOf(services: Services, name: string, analyticsEnabled: boolean) {
  const workspace = answered(services.workspaces.create({ name, analyticsEnabled }, actor));
  const rootKey = answered(services.workspaces.createRootKey({ workspace: name, name: "seed", permissions: [...ALL_GRANTS] }, actor)).key;
  return { workspace, principal: services.auth.authenticate(`Bearer ${rootKey}`) };
}

const rootKeyWith = (services: Services, workspace: string, permissions: string[]) =>
  answered(services.workspaces.createRootKey({ workspace, name: permissions.join("+"), permissions }, actor)).key;

export async function seedHostile(dataDir: string): Promise<HostileData> {
  const config = loadConfig({ TOLLGATE_DATA_DIR: dataDir });
  const opened = openDataDir(config, silentLogger);
  try {
    const services = buildServices(opened, config, systemClock);
    const limits = adminOf(services, "hostile_limits", false);
    services.ratelimits.limit(limits.principal, { namespace: HOSTILE_NAMESPACE, identifier: "seed", limit: 1, duration: 1000 });
    const keysWs = adminOf(services, "hostile_keys", true);
    const { apiId } = answered(services.apis.createApi(keysWs.principal, { name: "hostile" }));
    const keys = inTransaction(opened.storage, () =>
      Array.from({ length: AD_HOC_KEYS }, () => answered(services.keys.createKey(keysWs.principal, { apiId, prefix: "hostile" })).key));
    const keyOf = { workspaceId: keysWs.workspace.id, keySpaceId: "ks_hostile", keyId: "key_hostile", identityId: "", externalId: "" };
    for (let i = 0; i < EVENTS; i++) {
      services.verificationEvents.record({ timeMs: Date.now() - i, ...keyOf, outcome: "VALID", tags: [], spentCredits: 0, latencyMs: 1 });
    }
    await services.verificationEvents.flush();
    return {
      rootKeys: {
        limit: rootKeyWith(services, "hostile_limits", ["ratelimit.*.limit"]),
        verify: rootKeyWith(services, "hostile_keys", ["api.*.verify_key"]),
        createAndVerify: rootKeyWith(services, "hostile_keys", ["api.*.create_key", "api.*.verify_key"]),
        readAnalytics: rootKeyWith(services, "hostile_keys", ["api.*.read_analytics"]),
      },
      apiId,
      keys,
    };
  } finally {
    opened.close();
  }
}
