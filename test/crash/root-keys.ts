/**
 * Root keys of the crash suite, made and revoked with the real CLI beside the running service (as
 * an operator would): the narrow keys the load uses, and one key a round that the load revokes.
 * Each CLI call is a process start, so calls that do not depend on each other run side by side.
 */
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { runCli, type CliResult } from "../support/cli.ts";
import type { Ledger, TrackedRootKey } from "./ledger.ts";
import { rootKeyStatus, type Target } from "./client.ts";

/** The bootstrap root key of the crash data dir: every permission. */
export const ROOT_KEY = "tg_crash_root_key_0123456789abcdef";

/** Runs a CLI command on the data dir; a failure throws. */
export async function cli(dataDir: string, args: string[]): Promise<CliResult> {
  const res = await runCli(args, { dataDir, env: { TOLLGATE_ROOT_KEY: ROOT_KEY } });
  if (res.code !== 0) throw new Error(`tollgate ${args.join(" ")} exited ${res.code}: ${res.stderr}`);
  return res;
}

/** A root key of workspace `default` made with the CLI, and its id (read from the database: the CLI prints only the key). */
export async function createRootKey(dataDir: string, name: string, permissions: string[]): Promise<TrackedRootKey> {
  const key = (await cli(dataDir, ["root-key", "create", "--workspace", "default", "--name", name, ...permissions.flatMap((p) => ["--permission", p])])).stdout.trim();
  const db = new Database(join(dataDir, "tollgate.db"), { readonly: true });
  try {
    // Other CLI calls may be writing side by side.
    db.run("PRAGMA busy_timeout = 10000");
    const row = db.query<{ id: string }, [string]>("SELECT id FROM root_keys WHERE name = ?").get(name);
    if (!row) throw new Error(`root key ${name} was created but is not in the database`);
    return { id: row.id, key, revoked: false };
  } finally {
    db.close();
  }
}

/** The root key that round `round` revokes: it may only read APIs. */
export function createDoomedRootKey(dataDir: string, round: number): Promise<TrackedRootKey> {
  return createRootKey(dataDir, `crash-round-${round}`, ["api.*.read_api"]);
}

/**
 * Before the first start (which then finds the workspace made with ROOT_KEY): analytics on, the
 * narrow root keys of the load and the first round's doomed key.
 */
export async function prepare(dataDir: string): Promise<{ keys: Pick<Target, "verifierKey" | "managerKey">; firstDoomed: TrackedRootKey }> {
  await cli(dataDir, ["workspace", "update", "default", "--analytics", "on"]);
  const [verifier, manager, firstDoomed] = await Promise.all([
    createRootKey(dataDir, "crash-verifier", ["api.*.verify_key"]),
    createRootKey(dataDir, "crash-manager", ["api.*.update_key", "api.*.delete_key", "api.*.read_key"]),
    createDoomedRootKey(dataDir, 1),
  ]);
  return { keys: { verifierKey: verifier.key, managerKey: manager.key }, firstDoomed };
}

/** Takes a round's doomed key into the ledger once the running service accepted it. */
export async function adoptDoomed(t: Target, ledger: Ledger, doomed: TrackedRootKey, round: number): Promise<void> {
  const status = await rootKeyStatus(t, doomed.key);
  if (status !== 200) throw new Error(`the root key made for round ${round} answered ${status}`);
  ledger.rootKeys.push(doomed);
  ledger.audited.add(doomed.id);
}
