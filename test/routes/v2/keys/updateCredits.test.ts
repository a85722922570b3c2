import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { createKey, expectError, expectInvalid, KEY_NOT_FOUND } from "../../../support/contract.ts";
import { auditRows, getKey, verify } from "../../../support/key-management.ts";

const h = routeContract("/v2/keys.updateCredits", { api: "credits" });

const credits = h.call;
const monthly = { interval: "monthly", amount: 100, refillDay: 1 };

async function expectCredits(body: Record<string, unknown>, data: unknown): Promise<void> {
  const res = await credits(body);
  expect({ status: res.status, data: res.body.data }).toEqual({ status: 200, data });
}

describe("200", () => {
  test("set N: the balance, seen by the very next verification; the refill is kept", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId, credits: { remaining: 1, refill: monthly } });
    expect(await verify(h, key)).toMatchObject({ code: "VALID", credits: 0 });
    await expectCredits({ keyId, operation: "set", value: 10 }, { remaining: 10, refill: monthly });
    expect(await verify(h, key)).toMatchObject({ code: "VALID", credits: 9 });
  });

  test("set null or without a value: unlimited, refill cleared", async () => {
    for (const body of [{ value: null }, {}]) {
      const { keyId, key } = await createKey(h, { apiId: h.apiId, credits: { remaining: 0, refill: { interval: "daily", amount: 5 } } });
      expect((await verify(h, key)).code).toBe("USAGE_EXCEEDED");
      await expectCredits({ keyId, operation: "set", ...body }, { remaining: null });
      const result = await verify(h, key);
      expect(result.code).toBe("VALID");
      expect(result.credits).toBeUndefined();
      expect((await getKey(h, keyId)).credits).toBeUndefined();
    }
  });

  test("set on an unlimited key limits it from the next verification on", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId });
    expect((await verify(h, key)).credits).toBeUndefined();
    await expectCredits({ keyId, operation: "set", value: 0 }, { remaining: 0 });
    expect((await verify(h, key)).code).toBe("USAGE_EXCEEDED");
  });

  test("increment adds; the next verification spends from the new balance", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId, credits: { remaining: 0 } });
    expect((await verify(h, key)).code).toBe("USAGE_EXCEEDED");
    await expectCredits({ keyId, operation: "increment", value: 3 }, { remaining: 3 });
    expect(await verify(h, key)).toMatchObject({ code: "VALID", credits: 2 });
  });

  test("decrement subtracts and stops at 0", async () => {
    const { keyId, key } = await createKey(h, { apiId: h.apiId, credits: { remaining: 5 } });
    expect(await verify(h, key)).toMatchObject({ code: "VALID", credits: 4 });
    await expectCredits({ keyId, operation: "decrement", value: 3 }, { remaining: 1 });
    await expectCredits({ keyId, operation: "decrement", value: 100 }, { remaining: 0 });
    expect((await verify(h, key)).code).toBe("USAGE_EXCEEDED");
  });

  test("a daily refill is shown without refillDay", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId, credits: { remaining: 1, refill: { interval: "daily", amount: 7 } } });
    await expectCredits({ keyId, operation: "increment", value: 1 }, { remaining: 2, refill: { interval: "daily", amount: 7 } });
  });

  test("writes one key.update_credits audit entry", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId, credits: { remaining: 1 } });
    await credits({ keyId, operation: "increment", value: 1 });
    const rows = await auditRows(h, "key.update_credits", keyId);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.resources.map((r) => r.id)).toEqual([keyId, h.apiId]);
  });
});

describe("400", () => {
  test.each([
    ["increment", "no value", {}],
    ["increment", "a null value", { value: null }],
    ["decrement", "no value", {}],
  ])("%s with %s", async (operation, _name, body) => {
    const { keyId } = await createKey(h, { apiId: h.apiId, credits: { remaining: 1 } });
    const res = await credits({ keyId, operation, ...body });
    expectInvalid(h, res, "body.value");
    expect(res.body.error.detail).toBe("When specifying an increment or decrement operation, a value must be provided.");
  });

  test.each(["increment", "decrement"])("%s on a key with unlimited credits", async (operation) => {
    const { keyId } = await createKey(h, { apiId: h.apiId });
    const res = await credits({ keyId, operation, value: 1 });
    expectInvalid(h, res, "body.operation");
    expect(res.body.error.detail).toBe("You cannot increment or decrement a key with unlimited credits.");
    expect((await getKey(h, keyId)).credits).toBeUndefined();
  });

  test.each([
    ["an unknown operation", { operation: "multiply", value: 2 }, "body.operation"],
    ["no operation", { value: 2 }, "body.operation"],
    ["a negative value", { operation: "set", value: -1 }, "body.value"],
    ["a fractional value", { operation: "set", value: 1.5 }, "body.value"],
    ["a numeric string", { operation: "set", value: "5" }, "body.value"],
    ["an unknown field", { operation: "set", refill: null }, "body.refill"],
  ])("%s", async (_name, body, location) => {
    expectInvalid(h, await credits({ keyId: "key_123", ...body }), location);
  });
});

describe("403", () => {
  test("without update_key on the key's API; the balance stays", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId, credits: { remaining: 4 } });
    await h.expectDeniedWithout("api.*.update_key", { keyId, operation: "set", value: 100 }, h.apiId);
    expect((await getKey(h, keyId)).credits).toEqual({ remaining: 4 });
  });
});

describe("404", () => {
  test("an unknown key", async () => {
    expectError(h, await credits({ keyId: "key_unknown", operation: "set", value: 1 }), 404, KEY_NOT_FOUND, "We could not find the requested key.");
  });

  test("a key of another workspace: the unknown key's answer", async () => {
    const { keyId } = await createKey(h, { apiId: h.apiId, credits: { remaining: 1 } });
    await h.expectHiddenFromOtherWorkspace({ keyId, operation: "set", value: 9 }, KEY_NOT_FOUND, "We could not find the requested key.");
  });
});
