/**
 * Verifications of a key whose cold load is in flight wait for that load instead of starting
 * their own, unless a change (a cache drop) came after it began: then they load afresh, so a
 * change is visible to every verification that arrives after it.
 */
import { expect, test } from "bun:test";
import { KeyCache } from "../../../src/services/key-cache/index.ts";
import { VerificationService, type KeySnapshot } from "../../../src/services/verification/index.ts";
import { permissionSet } from "../../../src/services/verification/permission-set.ts";
import type { Principal } from "../../../src/services/auth/index.ts";

const principal: Principal = { workspaceId: "ws_1", rootKeyId: "rk_1", permissions: new Set(["api.*.verify_key"]), actor: { type: "cli", id: "test" } };

function snapshot(permissions: string[]): KeySnapshot {
  const set = permissionSet(permissions, JSON.stringify(permissions));
  return {
    keyId: "key_1", workspaceId: "ws_1", keySpaceId: "ks_1", apiId: "api_1", apiDeleted: false, name: null, meta: null, expiresAt: null,
    enabled: true, deleted: false, remaining: null, roles: [], permissions: set.permissions, held: set.held,
    answer: { permissions: set.answer, roles: [] }, identity: null, ratelimits: [], holdsRawJson: false, sizeBytes: 1000,
  };
}

/** A source whose loads the test settles by hand, counting them. */
function manualSource() {
  const pending: Array<(snap: KeySnapshot) => void> = [];
  return {
    pending,
    load: () => new Promise<KeySnapshot | undefined>((resolve) => pending.push(resolve)),
  };
}

function service(source: ReturnType<typeof manualSource>, cache: KeyCache<KeySnapshot>) {
  return new VerificationService({
    clock: { now: () => 0 }, snapshots: source, cache, changesElsewhere: { look() {} },
    limiter: {} as never, credits: {} as never,
  });
}

test("verifications of a key being loaded share the load", async () => {
  const source = manualSource();
  const verification = service(source, new KeyCache({ maxEntries: 10, maxBytes: 1 << 20 }));
  const answers = [1, 2, 3].map(() => verification.verifyKey(principal, { key: "k", permissions: "a.b" }));
  expect(source.pending).toHaveLength(1);
  source.pending[0]!(snapshot(["a.b"]));
  expect((await Promise.all(answers)).map((a) => a.code)).toEqual(["VALID", "VALID", "VALID"]);
});

test("a verification after a change does not take the answer of a load begun before it", async () => {
  const source = manualSource();
  const cache = new KeyCache<KeySnapshot>({ maxEntries: 10, maxBytes: 1 << 20 });
  const verification = service(source, cache);
  const before = verification.verifyKey(principal, { key: "k", permissions: "a.b" });
  cache.keyChanged("key_1");
  const after = verification.verifyKey(principal, { key: "k", permissions: "a.b" });
  expect(source.pending).toHaveLength(2);
  source.pending[0]!(snapshot(["a.b"]));
  source.pending[1]!(snapshot([]));
  expect([(await before).code, (await after).code]).toEqual(["VALID", "INSUFFICIENT_PERMISSIONS"]);
  // Only the second load is cached: the first was overtaken by the change.
  expect(cache.size).toBe(1);
});
