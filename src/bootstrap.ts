/**
 * First start on an empty data dir: the `default` workspace and a root key holding every
 * permission, its value from TOLLGATE_ROOT_KEY or generated into `<data dir>/bootstrap-root-key`
 * (mode 0600). The value is never logged. Also the master key for recoverable keys.
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import type { WorkspaceService } from "./services/workspaces/index.ts";
import { ALL_GRANTS } from "./services/auth/index.ts";

export const BOOTSTRAP_KEY_FILE = "bootstrap-root-key";
export const MASTER_KEY_FILE = "master.key";

const SYSTEM_ACTOR = { type: "system" as const, id: "bootstrap", name: "first start" };

/**
 * Creates the default workspace and bootstrap root key when no workspace exists (atomically, so a
 * CLI command and `serve` racing on an empty data dir bootstrap once); returns where the key is, if created.
 */
export function bootstrapWorkspace(workspaces: WorkspaceService, dataDir: string, rootKey: string | undefined): { created: boolean; keyFile?: string } {
  const keyFile = join(dataDir, BOOTSTRAP_KEY_FILE);
  const created = workspaces.bootstrapDefault({ permissions: [...ALL_GRANTS], ...(rootKey ? { value: rootKey } : {}) }, SYSTEM_ACTOR, (key) => {
    if (rootKey) return;
    writeFileSync(keyFile, key + "\n", { mode: 0o600 });
    chmodSync(keyFile, 0o600);
  });
  if (!created) return { created: false };
  return rootKey ? { created: true } : { created: true, keyFile };
}

/** The master key: from the configuration, else `<data dir>/master.key`, generated (0600) on first use. */
export function loadMasterKey(dataDir: string, configured: Uint8Array | undefined): Uint8Array {
  if (configured) return configured;
  const file = join(dataDir, MASTER_KEY_FILE);
  if (existsSync(file)) {
    const bytes = Buffer.from(readFileSync(file, "utf8").trim(), "base64");
    if (bytes.length !== 32) throw new Error(`${file} does not hold the base64 of 32 bytes`);
    return new Uint8Array(bytes);
  }
  const bytes = randomBytes(32);
  writeFileSync(file, bytes.toString("base64") + "\n", { mode: 0o600 });
  chmodSync(file, 0o600);
  return new Uint8Array(bytes);
}
