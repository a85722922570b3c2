/**
 * keys.verifyKey with credits: exact spends under concurrency, no partial spend, cost 0, and a
 * balance that every route shows at once and that survives a restart.
 */
import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { createApi, createKey } from "../../../support/contract.ts";
import { getKey, verify } from "../../../support/key-management.ts";

const h = routeContract("/v2/keys.verifyKey", { api: "credits" });

const remainingOf = async (keyId: string) => (await getKey(h, keyId)).credits?.remaining;

describe("spends", () => {
  test("concurrent verifications spend exactly the balance, each answered with the balance after its own spend", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId, credits: { remaining: 10 } });
    const answers = await Promise.all(Array.from({ length: 25 }, () => verify(h, key)));
    const valid = answers.filter((a) => a.code === "VALID");
    expect(valid).toHaveLength(10);
    expect(valid.map((a) => a.credits).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(answers.filter((a) => a.code === "USAGE_EXCEEDED").every((a) => a.valid === false && a.credits === 0)).toBe(true);
    expect(await remainingOf(keyId)).toBe(0);
  });

  test("a cost above the balance spends nothing; the exact balance can be spent; cost 0 passes at 0", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId, credits: { remaining: 5 } });
    expect(await verify(h, key, { credits: { cost: 6 } })).toMatchObject({ valid: false, code: "USAGE_EXCEEDED", credits: 5 });
    expect(await verify(h, key, { credits: { cost: 5 } })).toMatchObject({ valid: true, code: "VALID", credits: 0 });
    expect(await verify(h, key, { credits: { cost: 0 } })).toMatchObject({ valid: true, code: "VALID", credits: 0 });
    expect(await verify(h, key)).toMatchObject({ valid: false, code: "USAGE_EXCEEDED", credits: 0 });
    expect(await remainingOf(keyId)).toBe(0);
  });
});

describe("the balance everywhere", () => {
  test("getKey, whoami and listKeys show the spends at once, and a restart keeps them", async () => {
    const api = await createApi(h, "credits-views");
    const { keyId, key } = await createKey(h, { apiId: api, credits: { remaining: 100 } });
    await Promise.all(Array.from({ length: 30 }, () => verify(h, key)));
    expect(await remainingOf(keyId)).toBe(70);
    expect((await h.post("/v2/keys.whoami", { key })).body.data.credits).toEqual({ remaining: 70 });
    expect((await h.post("/v2/apis.listKeys", { apiId: api })).body.data[0].credits).toEqual({ remaining: 70 });
    await h.restart();
    expect(await remainingOf(keyId)).toBe(70);
    expect(await verify(h, key)).toMatchObject({ code: "VALID", credits: 69 });
  });

  test("a credit update starts from the balance after every spend so far", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId, credits: { remaining: 100 } });
    await Promise.all(Array.from({ length: 10 }, () => verify(h, key)));
    const update = async (body: Record<string, unknown>) => (await h.post("/v2/keys.updateCredits", { keyId, ...body })).body.data;
    expect(await update({ operation: "increment", value: 5 })).toEqual({ remaining: 95 });
    expect(await verify(h, key)).toMatchObject({ credits: 94 });
    expect(await update({ operation: "decrement", value: 200 })).toEqual({ remaining: 0 });
    expect((await verify(h, key)).code).toBe("USAGE_EXCEEDED");
    expect(await update({ operation: "set", value: 50 })).toEqual({ remaining: 50 });
    expect(await verify(h, key)).toMatchObject({ code: "VALID", credits: 49 });
  });

  test("a key made unlimited while its spends wait for their commit answers VALID to every verification", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId, credits: { remaining: 100 } });
    const [answers, update] = await Promise.all([
      Promise.all(Array.from({ length: 20 }, () => verify(h, key))),
      h.post("/v2/keys.updateKey", { keyId, credits: null }),
    ]);
    expect(update.status).toBe(200);
    expect(answers.every((a) => a.code === "VALID")).toBe(true);
    expect("credits" in (await verify(h, key))).toBe(false);
    expect((await getKey(h, keyId)).credits).toBeUndefined();
  });
});
