/**
 * The soak's data, made through the real services before tollgate starts: a workspace with
 * analytics on, a root key with every grant, an API with `keys` keys (permissions on all; every
 * other key also a credit balance with a daily refill), and the rate-limit namespace.
 */
import { buildServices, openDataDir } from "../../src/boot.ts";
import { loadConfig } from "../../src/config.ts";
import { silentLogger } from "../../src/lib/logger.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { inTransaction } from "../../src/storage/db.ts";
import { answered } from "../../src/storage/work.ts";
import { ALL_GRANTS } from "../../src/services/auth/index.ts";

export const SOAK_NAMESPACE = "soak";

export interface SoakData {
  rootKey: string;
  apiId: string;
  /** Every key (plaintext) and its id, in creation order; odd positions carry credits. */
  keys: Array<{ key: string; keyId: string; metered: boolean }>;
}

export function seedSoak(dataDir: string, keyCount: number): SoakData {
  const config = loadConfig({ TOLLGATE_DATA_DIR: dataDir });
  const opened = openDataDir(config, silentLogger);
  const { storage } = opened;
  try {
    const services = buildServices(opened, config, systemClock);
    const actor = { type: "cli" as const, id: "soak" };
    answered(services.workspaces.create({ name: "soak", analyticsEnabled: true }, actor));
    const rootKey = answered(services.workspaces.createRootKey({ workspace: "soak", name: "soak", permissions: [...ALL_GRANTS] }, actor)).key;
    const principal = services.auth.authenticate(`Bearer ${rootKey}`);
    const { apiId } = answered(services.apis.createApi(principal, { name: "soak" }));
    answered(services.ratelimits.limit(principal, { namespace: SOAK_NAMESPACE, identifier: "seed", limit: 1000, duration: 60_000 }));
    const keys = inTransaction(storage, () => Array.from({ length: keyCount }, (_, i) => {
      const metered = i % 2 === 1;
      const created = answered(services.keys.createKey(principal, {
        apiId, prefix: "soak", externalId: `owner_${i % 500}`,
        permissions: i % 3 === 0 ? ["documents.read", "documents.write"] : ["documents.read"],
        ...(metered ? { credits: { remaining: 1_000_000_000, refill: { interval: "daily" as const, amount: 1_000_000_000 } } } : {}),
      }));
      return { ...created, metered };
    }));
    return { rootKey, apiId, keys };
  } finally {
    opened.close();
  }
}
