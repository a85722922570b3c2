/**
 * Root keys looked up with a promise (the cluster mode's PostgreSQL): `prepare` finds the key before
 * the request is handled, and `authenticate` answers from it synchronously, with the same errors
 * and the same caching of canonical headers only.
 */
import { expect, test } from "bun:test";
import { RootKeyAuthenticator } from "../../../src/services/auth/index.ts";
import type { RootKeyCredential } from "../../../src/storage/records/index.ts";
import { sha256Base64 } from "../../../src/lib/hashing.ts";
import { TestClock } from "../../support/test-clock.ts";

const TOKEN = "tg_root_prepared_lookup_0001";
const ROW: RootKeyCredential = {
  id: "rk_1", name: "ops", workspaceId: "ws_1", permissions: ["api.*.read_api"],
  enabled: true, expiresAt: null, revokedAt: null, workspaceEnabled: true,
};

function authenticator(rows: Record<string, RootKeyCredential>): { auth: RootKeyAuthenticator; lookups: string[] } {
  const lookups: string[] = [];
  const auth = new RootKeyAuthenticator({
    clock: new TestClock(),
    changesElsewhere: { look: () => undefined },
    lookupAnswersLater: true,
    unknown: { size: 100, ttlMs: 10_000 },
    concurrentLookups: 2,
    lookup: async (hash) => {
      lookups.push(hash);
      return rows[hash];
    },
  });
  return { auth, lookups };
}

test("a prepared canonical header authenticates and is cached: the next request needs no lookup", async () => {
  const { auth, lookups } = authenticator({ [sha256Base64(TOKEN)]: ROW });
  const header = `Bearer ${TOKEN}`;
  const prepared = await auth.prepare(header);
  expect(auth.authenticate(header, {}, prepared).rootKeyId).toBe("rk_1");
  expect(auth.prepare(header)).toBeUndefined();
  expect(auth.authenticate(header).workspaceId).toBe("ws_1");
  expect(lookups).toHaveLength(1);
});

test("a padded header authenticates from what was prepared for it, and is not cached", async () => {
  const { auth } = authenticator({ [sha256Base64(TOKEN)]: ROW });
  const padded = `Bearer   ${TOKEN} `;
  const prepared = await auth.prepare(padded);
  expect(auth.authenticate(padded, {}, prepared).rootKeyId).toBe("rk_1");
  expect(auth.cachedPrincipals).toBe(0);
});

test("an unknown key, a revoked one and bad headers answer as the synchronous lookup does", async () => {
  const { auth } = authenticator({ [sha256Base64("tg_root_revoked_key_00001")]: { ...ROW, revokedAt: 5 } });
  const unknown = "Bearer tg_root_nobody_has_this_key";
  await expect(async () => auth.authenticate(unknown, {}, await auth.prepare(unknown))).toThrow("The provided root key is invalid");
  const revoked = "Bearer tg_root_revoked_key_00001";
  await expect(async () => auth.authenticate(revoked, {}, await auth.prepare(revoked))).toThrow("The provided root key is invalid");
  expect(auth.prepare(undefined)).toBeUndefined();
  expect(auth.prepare("Basic abc")).toBeUndefined();
  expect(() => auth.authenticate("Basic abc")).toThrow("valid root key");
});

test("what was prepared for another header is not used", async () => {
  const { auth } = authenticator({ [sha256Base64(TOKEN)]: ROW });
  const prepared = await auth.prepare(`Bearer ${TOKEN}`);
  expect(() => auth.authenticate("Bearer tg_root_someone_else_0001", {}, prepared)).toThrow("must be prepared");
});
