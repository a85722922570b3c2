/**
 * Recoverable keys (DECISIONS "Recoverable keys"): the key string is kept only as AES-256-GCM
 * ciphertext under a per-workspace data key, which is itself kept only as AES-256-GCM ciphertext
 * under the master key. Checked here with node:crypto directly, independently of the Vault.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { createDecipheriv, randomBytes } from "node:crypto";
import { boot } from "../../../src/boot.ts";
import { loadConfig } from "../../../src/config.ts";
import { silentLogger } from "../../../src/lib/logger.ts";
import { startHarness, type Harness } from "../../support/harness.ts";
import { createApi, createKey, expectError, otherWorkspaceRootKey } from "../../support/contract.ts";

const MASTER = randomBytes(32);

/** Opens base64(iv ‖ ciphertext ‖ tag) with AES-256-GCM. */
function open(key: Uint8Array, sealed: string): Buffer {
  const raw = Buffer.from(sealed, "base64");
  const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(raw.length - 16));
  return Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]);
}

let h: Harness;
afterEach(async () => { await h.stop(); });

const sqlite = () => h.embedded.storage.sqlite;
const encryptedOf = (keyId: string) => sqlite().query<{ encrypted: string | null }, [string]>("SELECT encrypted FROM keys WHERE id = ?").get(keyId)!.encrypted;
const dataKeyOf = (workspaceId: string) => sqlite().query<{ encrypted: string }, [string]>("SELECT encrypted FROM data_keys WHERE workspace_id = ?").get(workspaceId)?.encrypted;
const workspaceOf = (keyId: string) => sqlite().query<{ workspace_id: string }, [string]>("SELECT workspace_id FROM keys WHERE id = ?").get(keyId)!.workspace_id;
const plaintextOf = async (keyId: string) => {
  const res = await h.post("/v2/keys.getKey", { keyId, decrypt: true });
  expect(res.status).toBe(200);
  return res.body.data.plaintext as string | undefined;
};

describe("envelope encryption", () => {
  test("the key string opens with the workspace data key, which opens with the master key", async () => {
    h = await startHarness({ env: { TOLLGATE_MASTER_KEY: MASTER.toString("base64") } });
    const apiId = await createApi(h, "vault");
    const k = await createKey(h, { apiId, prefix: "rec", recoverable: true });
    const sealedKey = encryptedOf(k.keyId)!;
    const sealedDataKey = dataKeyOf(workspaceOf(k.keyId))!;
    expect(Buffer.from(sealedKey, "base64").length).toBe(12 + Buffer.byteLength(k.key) + 16);
    const dataKey = open(MASTER, sealedDataKey);
    expect(dataKey.length).toBe(32);
    expect(open(dataKey, sealedKey).toString("utf8")).toBe(k.key);
    expect(() => open(randomBytes(32), sealedDataKey)).toThrow();
    expect(await plaintextOf(k.keyId)).toBe(k.key);
  });

  test("a fresh IV per key; one data key per workspace, each its own; none for keys that are not recoverable", async () => {
    h = await startHarness({ env: { TOLLGATE_MASTER_KEY: MASTER.toString("base64") } });
    const apiId = await createApi(h, "vault-ivs");
    const plain = await createKey(h, { apiId });
    expect(encryptedOf(plain.keyId)).toBeNull();
    expect(sqlite().query<{ n: number }, []>("SELECT count(*) AS n FROM data_keys").get()!.n).toBe(0);
    const a = await createKey(h, { apiId, recoverable: true });
    const b = await createKey(h, { apiId, recoverable: true });
    const iv = (keyId: string) => Buffer.from(encryptedOf(keyId)!, "base64").subarray(0, 12).toString("hex");
    expect(iv(a.keyId)).not.toBe(iv(b.keyId));
    const other = await otherWorkspaceRootKey(h, "vault-other");
    const otherApi = await createApi(h, "vault-elsewhere", other);
    const c = await createKey(h, { apiId: otherApi, recoverable: true }, other);
    const keyA = open(MASTER, dataKeyOf(workspaceOf(a.keyId))!);
    const keyC = open(MASTER, dataKeyOf(workspaceOf(c.keyId))!);
    expect(keyA.equals(keyC)).toBe(false);
    expect(() => open(keyA, encryptedOf(c.keyId)!)).toThrow();
  });

  test("a ciphertext that does not open: getKey and listKeys answer without plaintext, never a 500", async () => {
    h = await startHarness();
    const apiId = await createApi(h, "vault-tampered");
    const k = await createKey(h, { apiId, recoverable: true });
    const raw = Buffer.from(encryptedOf(k.keyId)!, "base64");
    raw[14] = raw[14]! ^ 0xff;
    sqlite().run("UPDATE keys SET encrypted = ? WHERE id = ?", [raw.toString("base64"), k.keyId]);
    expect(await plaintextOf(k.keyId)).toBeUndefined();
    const listed = await h.post("/v2/apis.listKeys", { apiId, decrypt: true });
    expect({ status: listed.status, plaintext: listed.body.data[0].plaintext }).toEqual({ status: 200, plaintext: undefined });
  });
});

describe("a master key that is not the one the keys were stored with", () => {
  test("no plaintext is shown; creating or rerolling a recoverable key is 412 and stores nothing", async () => {
    h = await startHarness({ env: { TOLLGATE_MASTER_KEY: MASTER.toString("base64") } });
    const apiId = await createApi(h, "vault-rotated");
    const k = await createKey(h, { apiId, recoverable: true });
    await h.running.stop();
    const config = loadConfig({ TOLLGATE_DATA_DIR: h.dataDir, TOLLGATE_PORT: "0", TOLLGATE_ROOT_KEY: h.rootKey, TOLLGATE_MASTER_KEY: randomBytes(32).toString("base64") });
    h.running = await boot({ config, logger: silentLogger, clock: h.clock });
    h.url = h.running.url;
    expect(await plaintextOf(k.keyId)).toBeUndefined();
    const keys = () => sqlite().query<{ n: number }, []>("SELECT count(*) AS n FROM keys").get()!.n;
    const before = keys();
    const detail = "Recoverable keys are unavailable: the configured master key (TOLLGATE_MASTER_KEY or <data dir>/master.key) is not the one this workspace's keys were encrypted with.";
    expectError(h, await h.post("/v2/keys.createKey", { apiId, recoverable: true }), 412, "service/application/precondition_failed", detail);
    expectError(h, await h.post("/v2/keys.rerollKey", { keyId: k.keyId, expiration: 0 }), 412, "service/application/precondition_failed", detail);
    expect(keys()).toBe(before);
    expect((await h.post("/v2/keys.verifyKey", { key: k.key })).body.data.code).toBe("VALID");
    expect((await h.post("/v2/keys.createKey", { apiId })).status).toBe(200);
  });
});
