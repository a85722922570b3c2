/**
 * Key snapshots share what many keys hold alike (a permission set and its index, role lists, empty
 * limit lists); a change to one key never shows in another's snapshot.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { SnapshotLoader, type KeySnapshot } from "../../../src/services/verification/snapshot.ts";
import { holds } from "../../../src/services/verification/permission-query.ts";
import { sha256Base64 } from "../../../src/lib/hashing.ts";
import { startHarness, type Harness } from "../../support/harness.ts";
import { createApi, createKey } from "../../support/contract.ts";

let h: Harness;
let apiId: string;
let loader: SnapshotLoader;
beforeEach(async () => {
  h = await startHarness();
  apiId = await createApi(h, "snapshots");
  loader = new SnapshotLoader(h.embedded.storage.sqlite, { pendingOf: () => 0 }, 16 * 1024 * 1024);
});
afterEach(async () => { await h.stop(); });

/** A small key's snapshot, which comes at once. */
const load = (key: string): KeySnapshot => {
  const snap = loader.load(sha256Base64(key));
  if (snap === undefined || snap instanceof Promise) throw new Error("expected a snapshot at once");
  return snap;
};

test("keys with the same permissions share one permission list, index and role list, and one frozen limit list; their own values stay their own", async () => {
  const a = await createKey(h, { apiId, permissions: ["documents.read", "documents.write"], name: "a" });
  const b = await createKey(h, { apiId, permissions: ["documents.write", "documents.read"], name: "b" });
  const [sa, sb] = [load(a.key), load(b.key)];
  expect(sa.permissions).toEqual(["documents.read", "documents.write"]);
  expect(sb.permissions).toBe(sa.permissions);
  expect(sb.held).toBe(sa.held);
  expect(sb.roles).toBe(sa.roles);
  expect(sb.ratelimits).toBe(sa.ratelimits);
  // The shared limit list is frozen; the permission and role lists are not, as answers serialise them (snapshot.ts).
  expect([Object.isFrozen(sa.permissions), Object.isFrozen(sa.roles), Object.isFrozen(sa.ratelimits)]).toEqual([false, false, true]);
  expect([sa.keyId, sa.name, sb.keyId, sb.name]).toEqual([a.keyId, "a", b.keyId, "b"]);
});

test("a permission added to one key shows in its next snapshot and verification only", async () => {
  const a = await createKey(h, { apiId, permissions: ["documents.read"] });
  const b = await createKey(h, { apiId, permissions: ["documents.read"] });
  const before = load(a.key);
  expect((await h.post("/v2/keys.addPermissions", { keyId: b.keyId, permissions: ["documents.delete"] })).status).toBe(200);
  const [sa, sb] = [load(a.key), load(b.key)];
  expect(sb.permissions).toEqual(["documents.delete", "documents.read"]);
  expect(holds(sb.held, "documents.delete")).toBe(true);
  expect(sa.permissions).toEqual(["documents.read"]);
  expect(sa.held).toBe(before.held);
  expect(holds(sa.held, "documents.delete")).toBe(false);
  const verify = async (key: string) => (await h.post("/v2/keys.verifyKey", { key, permissions: "documents.delete" })).body.data.code;
  expect([await verify(a.key), await verify(b.key)]).toEqual(["INSUFFICIENT_PERMISSIONS", "VALID"]);
});

test("a key's own rate limits are its own, not shared", async () => {
  const limit = { name: "requests", limit: 10, duration: 60_000, autoApply: true };
  const a = await createKey(h, { apiId, ratelimits: [limit] });
  const b = await createKey(h, { apiId, ratelimits: [limit] });
  const [sa, sb] = [load(a.key), load(b.key)];
  expect(sa.ratelimits).toHaveLength(1);
  expect(sb.ratelimits).not.toBe(sa.ratelimits);
  expect(sb.ratelimits[0]!.id).not.toBe(sa.ratelimits[0]!.id);
});
