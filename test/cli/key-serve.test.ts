/**
 * Key commands beside a running `serve` on the same data dir: a key the CLI creates verifies at once,
 * and a change the CLI makes to a key the server has cached (disable, credits, delete) shows in the
 * very next verification: the server drops its key cache when another process commits. Every change
 * is audited with the CLI as the actor.
 */
import { describe, expect, test } from "bun:test";
import { auditEntriesNaming, runCli, type Served } from "../support/cli.ts";
import { perFile } from "../support/cli-slots.ts";

const file = perFile();
const server = (): Served => file.server;
const cli = (...args: string[]) => runCli(args, { dataDir: file.dir });
const CLI_ACTOR = { type: "cli", id: "cli", name: "tollgate CLI" };

async function verify(key: string): Promise<{ valid: boolean; code: string; credits?: number }> {
  const r = await server().post("/v2/keys.verifyKey", { key }, file.rootKey);
  expect(r.status).toBe(200);
  return r.body.data;
}

let keyId = "";
let key = "";

describe("a key made and changed by the CLI while serve runs", () => {
  test("verifies at once, and again from the server's cache", async () => {
    expect((await cli("api", "create", "shop")).code).toBe(0);
    const r = await cli("key", "create", "--api", "shop", "--credits", "10");
    expect(r.code).toBe(0);
    key = r.stdout.trim();
    keyId = r.stderr.trim().split("\n").at(-1)!;
    expect(await verify(key)).toMatchObject({ valid: true, code: "VALID", credits: 9 });
    expect(await verify(key)).toMatchObject({ valid: true, code: "VALID", credits: 8 });
  });

  test("disable: the next verification is DISABLED; enable: VALID again", async () => {
    expect((await cli("key", "disable", keyId)).code).toBe(0);
    expect(await verify(key)).toMatchObject({ valid: false, code: "DISABLED" });
    expect((await cli("key", "enable", keyId)).code).toBe(0);
    expect(await verify(key)).toMatchObject({ valid: true, code: "VALID" });
  });

  test("credits set 0: USAGE_EXCEEDED; the CLI reads the balance the server spent", async () => {
    // 10, less the three VALID verifications (DISABLED spends nothing), which the server spent.
    expect((await cli("key", "credits", keyId, "add", "0")).stdout).toBe("7\n");
    expect((await cli("key", "credits", keyId, "set", "0")).code).toBe(0);
    expect(await verify(key)).toMatchObject({ valid: false, code: "USAGE_EXCEEDED" });
  });

  test("credits set 5 after the server's spends: the server counts from 5 (its ledger follows the CLI's fold)", async () => {
    expect((await cli("key", "credits", keyId, "set", "5")).stdout).toBe("5\n");
    const got = await server().post("/v2/keys.getKey", { keyId }, file.rootKey);
    expect(got.body.data.credits).toEqual({ remaining: 5 });
    expect(await verify(key)).toMatchObject({ valid: true, code: "VALID", credits: 4 });
    expect((await cli("key", "get", keyId, "--json")).stdout).toContain('"credits":{"remaining":4}');
  });

  test("delete: the next verification is NOT_FOUND", async () => {
    expect((await cli("key", "delete", keyId)).code).toBe(0);
    expect(await verify(key)).toMatchObject({ valid: false, code: "NOT_FOUND" });
  });

  test("each change has its audit entry with the CLI as the actor", async () => {
    const entries = await auditEntriesNaming(server(), file.rootKey, keyId);
    expect(entries.map((e) => e.event)).toEqual(["key.delete", "key.update_credits", "key.update_credits", "key.update_credits", "key.update", "key.update", "key.create"]);
    for (const e of entries) expect(e.actor).toEqual(CLI_ACTOR);
  });
});
