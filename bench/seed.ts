/**
 * Data for the benchmarks: a workspace, a root key with every permission, an API, and `count` keys.
 * The first keys (up to 1,000) are created through the real key service; the rest are copies of
 * them made with SQL (new id, key string and hash; same permissions and credits), because creating
 * a million keys one by one through the service takes many minutes. A copy is an ordinary row:
 * verification reads it exactly like a key made by the service.
 */
import { buildServices, openDataDir } from "../src/boot.ts";
import { loadConfig } from "../src/config.ts";
import { systemClock } from "../src/lib/clock.ts";
import { sha256Base64 } from "../src/lib/hashing.ts";
import { newId, randomKeyPart } from "../src/lib/ids.ts";
import { silentLogger } from "../src/lib/logger.ts";
import { ALL_GRANTS } from "../src/services/auth/index.ts";
import { inTransaction } from "../src/storage/db.ts";
import { answered } from "../src/storage/work.ts";

export interface SeedOptions {
  /** Credits each key starts with; none (unlimited) when undefined. */
  credits?: number;
  /** Permissions of each key; key i also gets `documents.<i % 7>`. */
  permissions?: string[];
  /** An external id per key, `owner_<i % 100>`, so keys share identities. */
  identities?: boolean;
  /** Keys made through the service before the rest are copied (default 1,000). */
  templates?: number;
}

export interface Seeded {
  rootKey: string;
  workspaceId: string;
  apiId: string;
  keys: string[];
}

const COPY_BATCH = 50_000;

export function seedKeys(dataDir: string, count: number, opts: SeedOptions = {}): Seeded {
  const config = loadConfig({ TOLLGATE_DATA_DIR: dataDir });
  const opened = openDataDir(config, silentLogger);
  const { storage } = opened;
  try {
    const services = buildServices(opened, config, systemClock);
    const actor = { type: "cli" as const, id: "bench" };
    const workspace = answered(services.workspaces.create({ name: "default" }, actor));
    const rootKey = answered(services.workspaces.createRootKey({ workspace: "default", name: "bench", permissions: [...ALL_GRANTS] }, actor)).key;
    const principal = services.auth.authenticate(`Bearer ${rootKey}`);
    const { apiId } = answered(services.apis.createApi(principal, { name: "bench" }));
    const templates = Math.min(count, opts.templates ?? 1_000);
    const created = inTransaction(storage, () => Array.from({ length: templates }, (_, i) => answered(services.keys.createKey(principal, {
      apiId, prefix: "bk",
      permissions: [...(opts.permissions ?? ["documents.read"]), `documents.${i % 7}`],
      ...(opts.identities ? { externalId: `owner_${i % 100}` } : {}),
      ...(opts.credits !== undefined ? { credits: { remaining: opts.credits } } : {}),
    }))));
    const keys = created.map((k) => k.key);
    const sqlite = storage.sqlite;
    const copyKey = sqlite.prepare<unknown, [string, string, string, string]>(
      `INSERT INTO keys (id, workspace_id, key_space_id, hash, start, name, identity_id, meta, expires_at, enabled, remaining, refill_amount, refill_day,
         last_refill_at, recoverable, encrypted, created_at, updated_at, last_used_at, deleted_at)
       SELECT ?1, workspace_id, key_space_id, ?2, ?3, name, identity_id, meta, expires_at, enabled, remaining, refill_amount, refill_day,
         last_refill_at, recoverable, encrypted, created_at, updated_at, last_used_at, deleted_at FROM keys WHERE id = ?4`,
    );
    const copyPermissions = sqlite.prepare<unknown, [string, string]>(
      "INSERT INTO key_permissions (key_id, permission_id, workspace_id, created_at) SELECT ?1, permission_id, workspace_id, created_at FROM key_permissions WHERE key_id = ?2",
    );
    const copyRoles = sqlite.prepare<unknown, [string, string]>(
      "INSERT INTO key_roles (key_id, role_id, workspace_id, created_at) SELECT ?1, role_id, workspace_id, created_at FROM key_roles WHERE key_id = ?2",
    );
    for (let from = templates; from < count; from += COPY_BATCH) {
      inTransaction(storage, () => {
        for (let i = from; i < Math.min(count, from + COPY_BATCH); i++) {
          const template = created[i % templates]!;
          const random = randomKeyPart(16);
          const key = `bk_${random}`;
          const id = newId("key");
          copyKey.run(id, sha256Base64(key), `bk_${random.slice(0, 4)}`, template.keyId);
          copyPermissions.run(id, template.keyId);
          copyRoles.run(id, template.keyId);
          keys.push(key);
        }
      });
    }
    return { rootKey, workspaceId: workspace.id, apiId, keys };
  } finally {
    opened.close();
  }
}
