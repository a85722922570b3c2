/**
 * `meta` of keys and identities: at most 100 properties and 1 MB of JSON (1,048,576 bytes of its
 * UTF-8 text; 400 with upstream's detail beyond) on every route that takes it; and a meta near the
 * bound comes back from verification exactly as stored, loaded and cached.
 *
 * The request body limit here is 1 MiB, so a meta just over the bound cannot reach the services
 * over HTTP: those cases call the services directly, as the routes do.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../support/harness.ts";
import { createApi, createKey, expectInvalid } from "../support/contract.ts";
import { verify } from "../support/key-management.ts";
import type { Principal } from "../../src/services/auth/index.ts";

const MAX_META_BYTES = 1_048_576;
/** `{"blob":"…"}` whose JSON text is `bytes` long, in `char`s of `charBytes` UTF-8 bytes each. */
const metaOfBytes = (bytes: number, char = "x", charBytes = 1) => ({ blob: char.repeat((bytes - 11) / charBytes) });
const TOO_LARGE = "Metadata is too large, it must be less than 1MB, got: 1.00";

let h: Harness;
let principal: Principal;
let apiId: string;
beforeAll(async () => {
  h = await startHarness();
  principal = h.running.services.auth.authenticate(`Bearer ${h.rootKey}`);
  apiId = await createApi(h, "meta-bounds");
});
afterAll(() => h.stop());

/** Each route that takes meta, called through its service with `meta`; returns what it stored, read back. */
const writers: Array<[string, (meta: Record<string, unknown>, n: number) => Promise<unknown>]> = [
  ["keys.createKey", async (meta) => {
    const { keyId } = await h.running.services.keys.createKey(principal, { apiId, meta });
    return (await h.running.services.keys.getKey(principal, { keyId })).meta;
  }],
  ["keys.updateKey", async (meta, n) => {
    const { keyId } = await h.running.services.keys.createKey(principal, { apiId, name: `update-${n}` });
    await h.running.services.keys.updateKey(principal, { keyId, meta });
    return (await h.running.services.keys.getKey(principal, { keyId })).meta;
  }],
  ["identities.createIdentity", async (meta, n) => {
    const { identityId } = await h.running.services.identities.createIdentity(principal, { externalId: `create_${n}`, meta });
    return (await h.running.services.identities.getIdentity(principal, { identity: identityId })).meta;
  }],
  ["identities.updateIdentity", async (meta, n) => {
    const { identityId } = await h.running.services.identities.createIdentity(principal, { externalId: `update_${n}` });
    return (await h.running.services.identities.updateIdentity(principal, { identity: identityId, meta })).meta;
  }],
];

describe("the 1 MB bound, at the services", () => {
  let n = 0;
  test.each(writers)("%s: exactly 1,048,576 bytes of JSON is stored", async (_, write) => {
    const meta = metaOfBytes(MAX_META_BYTES);
    expect(JSON.stringify(meta).length).toBe(MAX_META_BYTES);
    expect(await write(meta, n++)).toEqual(meta);
  });

  test.each(writers)("%s: one byte more is 400 with upstream's detail", async (_, write) => {
    const error = await write(metaOfBytes(MAX_META_BYTES + 1), n++).then(() => undefined, (e: unknown) => e as { code?: string; message?: string });
    expect(error).toMatchObject({ code: "invalid_input", message: TOO_LARGE });
  });

  test.each(writers)("%s: bytes count, not characters (two-byte characters)", async (_, write) => {
    const meta = metaOfBytes(MAX_META_BYTES + 1, "é", 2);
    expect(JSON.stringify(meta).length).toBeLessThan(MAX_META_BYTES);
    await expect(write(meta, n++)).rejects.toThrow(TOO_LARGE);
  });

  test("nothing is stored when the meta is too large", () => {
    const before = h.embedded.storage.sqlite.query("SELECT count(*) AS n FROM keys").get() as { n: number };
    expect(() => h.running.services.keys.createKey(principal, { apiId, meta: metaOfBytes(MAX_META_BYTES + 1) })).toThrow(TOO_LARGE);
    expect(h.embedded.storage.sqlite.query("SELECT count(*) AS n FROM keys").get()).toEqual(before);
  });
});

describe("over HTTP", () => {
  const hundredAndOne = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`p${i}`, i]));
  const hundred = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`p${i}`, i]));

  test("400: more than 100 properties, on each route that takes meta", async () => {
    const { keyId } = await createKey(h, { apiId });
    expectInvalid(h, await h.post("/v2/keys.createKey", { apiId, meta: hundredAndOne }), "body.meta");
    expectInvalid(h, await h.post("/v2/keys.updateKey", { keyId, meta: hundredAndOne }), "body.meta");
    expectInvalid(h, await h.post("/v2/identities.createIdentity", { externalId: "props_101", meta: hundredAndOne }), "body.meta");
    expectInvalid(h, await h.post("/v2/identities.updateIdentity", { identity: "props_101", meta: hundredAndOne }), "body.meta");
  });

  test("200: 100 properties", async () => {
    const { keyId } = await createKey(h, { apiId, meta: hundred });
    expect((await h.post("/v2/keys.updateKey", { keyId, meta: hundred })).status).toBe(200);
    expect((await h.post("/v2/identities.createIdentity", { externalId: "props_100", meta: hundred })).status).toBe(200);
  });
});

describe("verification returns a large meta exactly", () => {
  test("a key meta and an identity meta near the bound, on the first verification (loaded) and the next (cached)", async () => {
    // As large as the 1 MiB request body allows, many small values, non-ASCII text and escapes included.
    const records = Array.from({ length: 10_000 }, (_, i) => ({ id: i, name: `user-${i} «ü» "q" \\ \n`, flags: [i % 2 === 0, null], score: i / 3 }));
    const keyMeta = { plan: "enterprise", records };
    const identityMeta = { tier: "gold", records: records.slice(0, 9000) };
    expect(Buffer.byteLength(JSON.stringify(keyMeta))).toBeGreaterThan(900_000);
    expect((await h.post("/v2/identities.createIdentity", { externalId: "big_meta_owner", meta: identityMeta })).status).toBe(200);
    const { key } = await createKey(h, { apiId, meta: keyMeta, externalId: "big_meta_owner" });
    const cache = h.running.services.keyCache;
    for (const expected of [{ misses: 1, hits: 0 }, { misses: 0, hits: 1 }]) {
      const [misses, hits] = [cache.misses, cache.hits];
      const res = await h.post("/v2/keys.verifyKey", { key });
      expect({ misses: cache.misses - misses, hits: cache.hits - hits }).toEqual(expected);
      expect(res.status).toBe(200);
      expect(res.body.data.meta).toEqual(keyMeta);
      expect(res.body.data.identity.meta).toEqual(identityMeta);
      expect(res.body.data).toMatchObject({ valid: true, code: "VALID", enabled: true });
    }
  });

  test("a meta just under the size kept as text still comes back exactly, and `{}` identity meta is left out", async () => {
    for (const size of [1023, 1024, 1025]) {
      const meta = metaOfBytes(size);
      const { key } = await createKey(h, { apiId, meta, externalId: `edge_${size}` });
      for (let i = 0; i < 2; i++) {
        const data = await verify(h, key);
        expect(data.meta).toEqual(meta);
        expect(data.identity).toEqual({ id: expect.stringMatching(/^id_/), externalId: `edge_${size}` });
      }
    }
  });
});
