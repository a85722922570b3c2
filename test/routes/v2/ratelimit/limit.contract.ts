/** The `limit` contract, the same in both path families (`ratelimit.limit` and `ratelimits.limit`). */
import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { expectError, expectInvalid, expectMissingOneOf, INSUFFICIENT, otherWorkspaceRootKey, ROOT_KEY_NOT_FOUND } from "../../../support/contract.ts";
import {
  auditEvents, createNamespace, expectData, type Family, insertDeletedNamespace, invalidBodyTests, MINUTE, namespaceId, NS_GONE, NS_GONE_DETAIL,
  path, setOverride, uniq, windowEnd,
} from "./support.ts";

export function limitContract(family: Family): void {
  const url = path(family, "limit");
  const h = routeContract(url);

  const body = (namespace: string, extra: Record<string, unknown> = {}) => ({ namespace, identifier: "user_1", limit: 3, duration: MINUTE, ...extra });

  describe("200", () => {
    test("the first call creates the namespace and answers exactly {success, limit, remaining, reset}", async () => {
      const ns = uniq("ns");
      const res = await h.post(url, body(ns));
      expectData(res, { success: true, limit: 3, remaining: 2, reset: windowEnd(h.clock.now(), MINUTE) });
      const id = await namespaceId(h, ns);
      expect(id).toMatch(/^rlns_/);
      expect(await auditEvents(h, "ratelimit.create_namespace", id!)).toBe(1);
    });

    test("passes exactly `limit` times, then denies with 200, success false and remaining 0", async () => {
      const ns = uniq("ns");
      const results = [];
      for (let i = 0; i < 4; i++) results.push((await h.post(url, body(ns))).body.data);
      expect(results.map((r) => [r.success, r.remaining])).toEqual([[true, 2], [true, 1], [true, 0], [false, 0]]);
    });

    test("cost defaults to 1; cost 0 only reports; a cost above what is left is denied and consumes nothing", async () => {
      const ns = uniq("ns");
      expect((await h.post(url, body(ns, { limit: 10 }))).body.data.remaining).toBe(9);
      expect((await h.post(url, body(ns, { limit: 10, cost: 0 }))).body.data).toMatchObject({ success: true, remaining: 9 });
      expect((await h.post(url, body(ns, { limit: 10, cost: 10 }))).body.data).toMatchObject({ success: false, remaining: 0 });
      expect((await h.post(url, body(ns, { limit: 10, cost: 9 }))).body.data).toMatchObject({ success: true, remaining: 0 });
    });

    test("the namespace may be addressed by id; name and id share the counter", async () => {
      const ns = uniq("ns");
      await h.post(url, body(ns));
      const res = await h.post(url, body((await namespaceId(h, ns))!));
      expect(res.body.data).toMatchObject({ success: true, remaining: 1 });
    });

    test("identifiers, namespaces and durations count separately", async () => {
      const ns = uniq("ns");
      const other = uniq("ns");
      for (let i = 0; i < 3; i++) await h.post(url, body(ns));
      expect((await h.post(url, body(ns))).body.data.success).toBe(false);
      expect((await h.post(url, body(ns, { identifier: "user_2" }))).body.data.success).toBe(true);
      expect((await h.post(url, body(other))).body.data.success).toBe(true);
      expect((await h.post(url, body(ns, { duration: 2 * MINUTE }))).body.data.success).toBe(true);
    });

    test("a used-up window frees up again as time passes", async () => {
      const ns = uniq("ns");
      for (let i = 0; i < 3; i++) await h.post(url, body(ns, { duration: 1000 }));
      expect((await h.post(url, body(ns, { duration: 1000 }))).body.data.success).toBe(false);
      h.clock.advance(2000);
      expect((await h.post(url, body(ns, { duration: 1000 }))).body.data).toMatchObject({ success: true, remaining: 2 });
    });

    test("an exact override replaces limit and duration and its id is returned", async () => {
      const ns = uniq("ns");
      await createNamespace(h, ns);
      const overrideId = await setOverride(h, ns, "user_1", 5, 1000);
      const res = await h.post(url, body(ns));
      expectData(res, { success: true, limit: 5, remaining: 4, reset: windowEnd(h.clock.now(), 1000), overrideId });
    });

    test("a wildcard override applies to matching identifiers only; an exact one wins over it", async () => {
      const ns = uniq("ns");
      await createNamespace(h, ns);
      const wildcard = await setOverride(h, ns, "premium_*", 100);
      const exact = await setOverride(h, ns, "premium_vip", 1000);
      expect((await h.post(url, body(ns, { identifier: "premium_a" }))).body.data).toMatchObject({ limit: 100, overrideId: wildcard });
      expect((await h.post(url, body(ns, { identifier: "premium_vip" }))).body.data).toMatchObject({ limit: 1000, overrideId: exact });
      const plain = (await h.post(url, body(ns, { identifier: "basic_a" }))).body.data;
      expect(plain.limit).toBe(3);
      expect(plain.overrideId).toBeUndefined();
    });

    test("an override with limit 0 denies every request (200, never 500)", async () => {
      const ns = uniq("ns");
      await createNamespace(h, ns);
      const overrideId = await setOverride(h, ns, "banned", 0);
      expect((await h.post(url, body(ns, { identifier: "banned" }))).body.data).toMatchObject({ success: false, limit: 0, remaining: 0, overrideId });
    });

    test("a changed override applies to the very next request", async () => {
      const ns = uniq("ns");
      await createNamespace(h, ns);
      await setOverride(h, ns, "u", 1);
      expect((await h.post(url, body(ns, { identifier: "u" }))).body.data.limit).toBe(1);
      await setOverride(h, ns, "u", 50);
      expect((await h.post(url, body(ns, { identifier: "u" }))).body.data.limit).toBe(50);
    });

    test("`ratelimit.<namespaceId>.limit` is enough for an existing namespace", async () => {
      const id = await createNamespace(h);
      const res = await h.post(url, body(id), { key: await h.rootKeyWith([`ratelimit.${id}.limit`]) });
      expect(res.body.data.success).toBe(true);
    });

    test("the same name in another workspace is another namespace", async () => {
      const ns = uniq("ns");
      for (let i = 0; i < 3; i++) await h.post(url, body(ns));
      const foreign = await otherWorkspaceRootKey(h, uniq("ws"));
      expect((await h.post(url, body(ns), { key: foreign })).body.data).toMatchObject({ success: true, remaining: 2 });
    });
  });

  describe("400", () => {
    invalidBodyTests(h, url, (change) => body("ns400", change), [
      ["limit 0", { limit: 0 }, "body.limit"],
      ["limit as a numeric string", { limit: "3" }, "body.limit"],
      ["limit not an integer", { limit: 1.5 }, "body.limit"],
      ["duration below 1000", { duration: 999 }, "body.duration"],
      ["duration above 30 days", { duration: 2_592_000_001 }, "body.duration"],
      ["negative cost", { cost: -1 }, "body.cost"],
      ["empty namespace", { namespace: "" }, "body.namespace"],
      ["namespace of 513 characters", { namespace: "n".repeat(513) }, "body.namespace"],
      ["empty identifier", { identifier: "" }, "body.identifier"],
      ["identifier of 513 characters", { identifier: "i".repeat(513) }, "body.identifier"],
      ["unknown field", { async: true }, "body.async"],
    ]);

    test("validation comes before authentication", async () => {
      expectInvalid(h, await h.post(url, body("ns400", { limit: 0 }), { key: null }), "body.limit");
    });
  });

  describe("401", () => {
    test("unknown root key", async () => {
      expectError(h, await h.post(url, body("ns401"), { key: "tg_root_unknown" }), 401, ROOT_KEY_NOT_FOUND);
    });
  });

  describe("403", () => {
    test("a new namespace without `create_namespace`: 403 and nothing is created", async () => {
      const ns = uniq("ns");
      const res = await h.expectDeniedWithout("ratelimit.*.create_namespace", body(ns));
      expect(await namespaceId(h, ns)).toBeUndefined();
    });

    test("a new namespace with `create_namespace` but no `ratelimit.*.limit`: 403 and nothing is created", async () => {
      const ns = uniq("ns");
      const res = await h.post(url, body(ns), { key: await h.rootKeyWith(["ratelimit.*.create_namespace"]) });
      expectError(h, res, 403, INSUFFICIENT, "Missing permission: 'ratelimit.*.limit'");
      expect(await namespaceId(h, ns)).toBeUndefined();
    });

    test("an existing namespace without `limit` on it; the detail names both grants", async () => {
      const id = await createNamespace(h);
      const other = await createNamespace(h);
      const res = await h.post(url, body(id), { key: await h.rootKeyWith([`ratelimit.${other}.limit`, "ratelimit.*.create_namespace"]) });
      expectMissingOneOf(h, res, ["ratelimit.*.limit", `ratelimit.${id}.limit`], [`ratelimit.${other}.limit`, "ratelimit.*.create_namespace"]);
    });
  });

  describe("410", () => {
    test("a deleted namespace, by name and by id", async () => {
      const ns = uniq("gone");
      const id = await insertDeletedNamespace(h, ns);
      expectError(h, await h.post(url, body(ns)), 410, NS_GONE, NS_GONE_DETAIL);
      expectError(h, await h.post(url, body(id)), 410, NS_GONE, NS_GONE_DETAIL);
    });
  });
}
