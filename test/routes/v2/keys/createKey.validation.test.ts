/** keys.createKey: every field and bound of the spec's createKey table, rejected (400) and accepted (200) at the edges. */
import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { expectError, expectInvalid, createRole, INVALID_INPUT } from "../../../support/contract.ts";

const h = routeContract("/v2/keys.createKey", { api: "validation" });

const create = (fields: Record<string, unknown>) => h.post("/v2/keys.createKey", { apiId: h.apiId, ...fields });
const keyCount = () => h.records.count("keys");
const rl = (over: Record<string, unknown> = {}) => ({ name: "limit", limit: 1, duration: 1000, ...over });

describe("400", () => {
  test.each([
    ["apiId missing", { apiId: undefined }, "body.apiId"],
    ["apiId of 2 characters", { apiId: "ap" }, "body.apiId"],
    ["apiId of 256 characters", { apiId: `api_${"x".repeat(252)}` }, "body.apiId"],
    ["apiId outside [a-zA-Z0-9_]", { apiId: "api-1" }, "body.apiId"],
    ["empty prefix", { prefix: "" }, "body.prefix"],
    ["prefix of 17 characters", { prefix: "p".repeat(17) }, "body.prefix"],
    ["prefix with a dash", { prefix: "my-app" }, "body.prefix"],
    ["empty name", { name: "" }, "body.name"],
    ["name of 256 characters", { name: "n".repeat(256) }, "body.name"],
    ["byteLength 15", { byteLength: 15 }, "body.byteLength"],
    ["byteLength 256", { byteLength: 256 }, "body.byteLength"],
    ["byteLength not an integer", { byteLength: 16.5 }, "body.byteLength"],
    ["byteLength as a string", { byteLength: "32" }, "body.byteLength"],
    ["empty externalId", { externalId: "" }, "body.externalId"],
    ["externalId of 256 characters", { externalId: "e".repeat(256) }, "body.externalId"],
    ["externalId with a space", { externalId: "user 1" }, "body.externalId"],
    ["externalId with a slash", { externalId: "org/user" }, "body.externalId"],
    ["meta as an array", { meta: [1, 2] }, "body.meta"],
    ["meta as a string", { meta: "x" }, "body.meta"],
    ["meta null", { meta: null }, "body.meta"],
    ["roles not an array", { roles: "admin" }, "body.roles"],
    ["101 roles", { roles: Array.from({ length: 101 }, (_, i) => `role${i}`) }, "body.roles"],
    ["empty role name", { roles: [""] }, "body.roles[0]"],
    ["role name of 101 characters", { roles: ["r".repeat(101)] }, "body.roles[0]"],
    ["role name with a space", { roles: ["ok", "not ok"] }, "body.roles[1]"],
    ["1001 permissions", { permissions: Array.from({ length: 1001 }, (_, i) => `p.${i}`) }, "body.permissions"],
    ["empty permission", { permissions: [""] }, "body.permissions[0]"],
    ["permission of 101 characters", { permissions: ["p".repeat(101)] }, "body.permissions[0]"],
    ["expires -1", { expires: -1 }, "body.expires"],
    ["expires 4102444800001", { expires: 4102444800001 }, "body.expires"],
    ["expires not an integer", { expires: 1.5 }, "body.expires"],
    ["expires as a string", { expires: "1700000000000" }, "body.expires"],
    ["credits null", { credits: null }, "body.credits"],
    ["credits.remaining -1", { credits: { remaining: -1 } }, "body.credits.remaining"],
    ["credits with an unknown field", { credits: { remaining: 1, cost: 1 } }, "body.credits.cost"],
    ["refill interval weekly", { credits: { remaining: 1, refill: { interval: "weekly", amount: 1 } } }, "body.credits.refill.interval"],
    ["refill amount 0", { credits: { remaining: 1, refill: { interval: "daily", amount: 0 } } }, "body.credits.refill.amount"],
    ["refill without amount", { credits: { remaining: 1, refill: { interval: "daily" } } }, "body.credits.refill.amount"],
    ["refillDay 0", { credits: { remaining: 1, refill: { interval: "monthly", amount: 1, refillDay: 0 } } }, "body.credits.refill.refillDay"],
    ["refillDay 32", { credits: { remaining: 1, refill: { interval: "monthly", amount: 1, refillDay: 32 } } }, "body.credits.refill.refillDay"],
    ["51 ratelimits", { ratelimits: Array.from({ length: 51 }, (_, i) => rl({ name: `limit${i}` })) }, "body.ratelimits"],
    ["ratelimit name of 2 characters", { ratelimits: [rl({ name: "ab" })] }, "body.ratelimits[0].name"],
    ["ratelimit name of 129 characters", { ratelimits: [rl({ name: "n".repeat(129) })] }, "body.ratelimits[0].name"],
    ["ratelimit limit 0", { ratelimits: [rl({ limit: 0 })] }, "body.ratelimits[0].limit"],
    ["ratelimit duration 999", { ratelimits: [rl({ duration: 999 })] }, "body.ratelimits[0].duration"],
    ["ratelimit without name", { ratelimits: [rl({ name: undefined })] }, "body.ratelimits[0].name"],
    ["ratelimit without limit", { ratelimits: [rl({ limit: undefined })] }, "body.ratelimits[0].limit"],
    ["ratelimit without duration", { ratelimits: [rl({ duration: undefined })] }, "body.ratelimits[0].duration"],
    ["ratelimit autoApply not a boolean", { ratelimits: [rl({ autoApply: "yes" })] }, "body.ratelimits[0].autoApply"],
    ["ratelimit with an unknown field", { ratelimits: [rl({ refillRate: 1 })] }, "body.ratelimits[0].refillRate"],
    ["enabled as a string", { enabled: "true" }, "body.enabled"],
    ["recoverable as a number", { recoverable: 1 }, "body.recoverable"],
    ["the v1 `ratelimit` object", { ratelimit: { limit: 1, duration: 1000 } }, "body.ratelimit"],
    ["an unknown field", { owner: "x" }, "body.owner"],
  ])("%s", async (_label, fields, location) => {
    const before = await keyCount();
    expectInvalid(h, await create(fields), location);
    expect(await keyCount()).toBe(before);
  });

  test("credits.refill without remaining", async () => {
    const res = await create({ credits: { refill: { interval: "daily", amount: 10 } } });
    const message = "`credits.remaining` must be provided when `credits.refill` is set.";
    expectError(h, res, 400, INVALID_INPUT, message);
    expect(res.body.error.errors).toEqual([{ location: "body.credits.remaining", message }]);
  });

  test("credits.refill with remaining null", async () => {
    expectInvalid(h, await create({ credits: { remaining: null, refill: { interval: "daily", amount: 10 } } }), "body.credits.remaining");
  });

  test("a monthly refill without refillDay", async () => {
    const res = await create({ credits: { remaining: 1, refill: { interval: "monthly", amount: 10 } } });
    const message = "`refillDay` must be provided when the refill interval is `monthly`.";
    expectError(h, res, 400, INVALID_INPUT, message);
    expect(res.body.error.errors).toEqual([{ location: "body.credits.refill.refillDay", message }]);
  });

  test("two ratelimits with one name", async () => {
    const res = await create({ ratelimits: [rl({ name: "same" }), rl({ name: "same" })] });
    expectInvalid(h, res, "body.ratelimits");
    expect(res.body.error.detail).toBe("Ratelimit with name 'same' is already defined in the request");
  });

  test("a body that is not an object", async () => {
    expectError(h, await h.post("/v2/keys.createKey", [h.apiId]), 400, INVALID_INPUT);
    expectError(h, await h.post("/v2/keys.createKey", "null"), 400, INVALID_INPUT);
  });
});

describe("200 at the bounds", () => {
  test.each([
    ["prefix of 1 character", { prefix: "p" }],
    ["prefix of 16 characters", { prefix: "P".repeat(16) }],
    ["name of 1 character", { name: "n" }],
    ["name of 255 characters", { name: "n".repeat(255) }],
    ["byteLength 16", { byteLength: 16 }],
    ["byteLength 255", { byteLength: 255 }],
    ["externalId of 1 character", { externalId: "e" }],
    ["externalId of 255 characters with . _ -", { externalId: `a.b_c-${"e".repeat(249)}` }],
    ["empty meta", { meta: {} }],
    ["1000 permissions", { permissions: Array.from({ length: 1000 }, (_, i) => `bulk.${i}`) }],
    ["a permission of 100 characters", { permissions: ["p".repeat(100)] }],
    ["wildcard permissions", { permissions: ["*", "docs.*", "a:b-c_d.e"] }],
    ["empty roles and permissions", { roles: [], permissions: [] }],
    ["expires 0", { expires: 0 }],
    ["expires 4102444800000", { expires: 4102444800000 }],
    ["credits.remaining 0", { credits: { remaining: 0 } }],
    ["refillDay 1 and 31", { credits: { remaining: 1, refill: { interval: "monthly", amount: 1, refillDay: 31 } } }],
    ["50 ratelimits", { ratelimits: Array.from({ length: 50 }, (_, i) => rl({ name: `limit${i}` })) }],
    ["ratelimit name of 3 and 128 characters", { ratelimits: [rl({ name: "abc" }), rl({ name: "n".repeat(128) })] }],
    ["ratelimit limit 1, duration 1000, autoApply omitted", { ratelimits: [rl()] }],
    ["enabled and recoverable false", { enabled: false, recoverable: false }],
  ])("%s", async (_label, fields) => {
    const res = await create(fields);
    expect(res.status).toBe(200);
    expect(res.body.data.keyId).toMatch(/^key_/);
  });

  test("100 roles, one of them named with 100 characters", async () => {
    const names = Array.from({ length: 99 }, (_, i) => `role_${i}`).concat(["r".repeat(100)]);
    for (const name of names) await createRole(h, name);
    const res = await create({ roles: names });
    expect(res.status).toBe(200);
    const view = await h.post("/v2/keys.getKey", { keyId: res.body.data.keyId });
    expect(view.body.data.roles).toEqual([...names].sort());
  });

  test("1000 permissions are all attached", async () => {
    const permissions = Array.from({ length: 1000 }, (_, i) => `many.${String(i).padStart(4, "0")}`);
    const res = await create({ permissions });
    const view = await h.post("/v2/keys.getKey", { keyId: res.body.data.keyId });
    expect(view.body.data.permissions).toEqual(permissions);
  });
});
