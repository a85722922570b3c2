import { describe, expect, test } from "bun:test";
import { testServer } from "../../../support/route-contract.ts";
import { allGrantsExcept, expectError, expectInvalid, expectMissingOneOf, INSUFFICIENT } from "../../../support/contract.ts";
import { createNamespace, expectData, insertDeletedNamespace, MINUTE, namespaceId, NS_GONE, NS_GONE_DETAIL, setOverride, uniq, windowEnd } from "./support.ts";

const URL = "/v2/ratelimit.multiLimit";
const h = testServer();

const item = (namespace: string, identifier: string, limit = 2, extra: Record<string, unknown> = {}) => ({ namespace, identifier, limit, duration: MINUTE, ...extra });
const remainingOf = async (namespace: string, identifier: string, limit = 2) =>
  (await h.post("/v2/ratelimit.limit", item(namespace, identifier, limit, { cost: 0 }))).body.data.remaining as number;

describe("200", () => {
  test("every check passes: passed true, one result per item in request order, the namespace as sent", async () => {
    const a = uniq("ns");
    const b = uniq("ns");
    await createNamespace(h, b);
    const bId = (await namespaceId(h, b))!;
    const reset = windowEnd(h.clock.now(), MINUTE);
    const res = await h.post(URL, [item(a, "u1"), item(bId, "u2", 5)]);
    expectData(res, {
      passed: true,
      limits: [
        { namespace: a, identifier: "u1", limit: 2, remaining: 1, reset, passed: true },
        { namespace: bId, identifier: "u2", limit: 5, remaining: 4, reset, passed: true },
      ],
    });
    expect(await namespaceId(h, a)).toMatch(/^rlns_/);
  });

  test("one check fails: passed false and nothing is charged; passing items report remaining uncharged", async () => {
    const ns = uniq("ns");
    await h.post("/v2/ratelimit.limit", item(ns, "full", 1));
    const res = await h.post(URL, [item(ns, "free", 2), item(ns, "full", 1)]);
    expect(res.status).toBe(200);
    expect(res.body.data.passed).toBe(false);
    expect(res.body.data.limits.map((l: { passed: boolean; remaining: number }) => [l.passed, l.remaining])).toEqual([[true, 2], [false, 0]]);
    expect(await remainingOf(ns, "free")).toBe(2);
  });

  test("the same counter twice in one batch sees the earlier item's cost", async () => {
    const ns = uniq("ns");
    const res = await h.post(URL, [item(ns, "twice", 3, { cost: 2 }), item(ns, "twice", 3, { cost: 2 })]);
    expect(res.body.data.passed).toBe(false);
    expect(await remainingOf(ns, "twice", 3)).toBe(3);
    const ok = await h.post(URL, [item(ns, "twice", 3, { cost: 2 }), item(ns, "twice", 3, { cost: 1 })]);
    expect(ok.body.data.passed).toBe(true);
    expect(await remainingOf(ns, "twice", 3)).toBe(0);
  });

  test("overrides apply per item, with their ids", async () => {
    const ns = uniq("ns");
    await createNamespace(h, ns);
    const overrideId = await setOverride(h, ns, "vip_*", 100);
    const res = await h.post(URL, [item(ns, "vip_1"), item(ns, "plain")]);
    expect(res.body.data.limits[0]).toMatchObject({ limit: 100, remaining: 99, overrideId });
    expect(res.body.data.limits[1].overrideId).toBeUndefined();
  });

  test("`ratelimit.<id>.limit` for every namespace of the batch is enough", async () => {
    const a = await createNamespace(h);
    const b = await createNamespace(h);
    const res = await h.post(URL, [item(a, "x"), item(b, "x")], { key: await h.rootKeyWith([`ratelimit.${a}.limit`, `ratelimit.${b}.limit`]) });
    expect(res.body.data.passed).toBe(true);
  });
});

describe("400", () => {
  test("an empty array", async () => {
    expectInvalid(h, await h.post(URL, []), "body");
  });

  test("more than 100 items", async () => {
    expectInvalid(h, await h.post(URL, Array.from({ length: 101 }, (_, i) => item("ns400", `u${i}`))), "body");
  });

  test("an object instead of an array", async () => {
    expectInvalid(h, await h.post(URL, item("ns400", "u")), "body");
  });

  test("an invalid item is named by its index", async () => {
    expectInvalid(h, await h.post(URL, [item("ns400", "u"), item("ns400", "u", 0)]), "body[1].limit");
  });
});

describe("403", () => {
  test("without `limit` on one namespace of the batch: 403 and nothing is charged", async () => {
    const a = await createNamespace(h);
    const b = await createNamespace(h);
    const res = await h.post(URL, [item(a, "x"), item(b, "x")], { key: await h.rootKeyWith([`ratelimit.${a}.limit`]) });
    expectMissingOneOf(h, res, ["ratelimit.*.limit", `ratelimit.${b}.limit`], [`ratelimit.${a}.limit`]);
    expect(await remainingOf(a, "x")).toBe(2);
  });

  test("a new namespace without `create_namespace`: 403 and none of the batch's namespaces is created", async () => {
    const a = uniq("ns");
    const b = uniq("ns");
    const res = await h.post(URL, [item(a, "x"), item(b, "x")], { key: await h.rootKeyWith(allGrantsExcept("ratelimit.*.create_namespace")) });
    expectError(h, res, 403, INSUFFICIENT, "Missing permission: 'ratelimit.*.create_namespace'");
    expect([await namespaceId(h, a), await namespaceId(h, b)]).toEqual([undefined, undefined]);
  });
});

describe("410", () => {
  test("one deleted namespace in the batch: 410, nothing charged, nothing created", async () => {
    const live = await createNamespace(h);
    const gone = await insertDeletedNamespace(h, uniq("gone"));
    const fresh = uniq("ns");
    const res = await h.post(URL, [item(live, "x"), item(fresh, "x"), item(gone, "x")]);
    expectError(h, res, 410, NS_GONE, NS_GONE_DETAIL);
    expect(await remainingOf(live, "x")).toBe(2);
    expect(await namespaceId(h, fresh)).toBeUndefined();
  });
});
