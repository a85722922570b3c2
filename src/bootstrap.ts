/**
 * First start on an empty data dir: the `default` workspace and a root key holding every
 * permission, its value from TOLLGATE_ROOT_KEY or generated into `<data dir>/bootstrap-root-key`
 * (mode 0600). The value is never logged. Also the master key for recoverable keys.
 *
 * Both files are written whole or not at all (storage/private-files.ts). master.key is created
 * once: processes racing on an empty data dir all use the first one written. bootstrap-root-key
 * is replaced instead, since only the bootstrap transaction writes it: a file already there is
 * from a bootstrap that never committed (or another data dir), and its key opens nothing.
 */
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { createFileOnce, replaceFile } from "./storage/private-files.ts";
import type { WorkspaceService } from "./services/workspaces/index.ts";
import { then, type Maybe } from "./storage/work.ts";
import { ALL_GRANTS } from "./services/auth/index.ts";

export const BOOTSTRAP_KEY_FILE = "bootstrap-root-key";
export const MASTER_KEY_FILE = "master.key";

const SYSTEM_ACTOR = { type: "system" as const, id: "bootstrap", name: "first start" };

/**
 * Creates the default workspace and bootstrap root key when no workspace exists (atomically, so a
 * CLI command and `serve` racing on an empty data dir bootstrap once); returns where the key is, if created.
 */
export function bootstrapWorkspace(workspaces: WorkspaceService, dataDir: string, rootKey: string | undefined): Maybe<{ created: boolean; keyFile?: string }> {
  const keyFile = join(dataDir, BOOTSTRAP_KEY_FILE);
  const created = workspaces.bootstrapDefault({ permissions: [...ALL_GRANTS], ...(rootKey ? { value: rootKey } : {}) }, SYSTEM_ACTOR, (key) => {
    if (!rootKey) replaceFile(keyFile, key + "\n");
  });
  return then(created, (made) => {
    if (!made) return { created: false };
    return rootKey ? { created: true } : { created: true, keyFile };
  });
}

/**
 * The master key: from the configuration, else `<data dir>/master.key`, generated (0600) on first
 * use; when another process creates it first, that one is read and used.
 */
export function loadMasterKey(dataDir: string, configured: Uint8Array | undefined): Uint8Array {
  if (configured) return configured;
  const file = join(dataDir, MASTER_KEY_FILE);
  const { content } = createFileOnce(file, randomBytes(32).toString("base64") + "\n");
  const bytes = Buffer.from(content.trim(), "base64");
  if (bytes.length !== 32) throw new Error(`${file} does not hold the base64 of 32 bytes`);
  return new Uint8Array(bytes);
}
