/** Accuracy: 3 × limit concurrent requests on one identifier → exactly `limit` succeed, every time. */
import { expect, test } from "bun:test";
import { testServer } from "../../../support/route-contract.ts";
import { createApi, createKey } from "../../../support/contract.ts";
import { MINUTE, uniq } from "./support.ts";

const h = testServer();

const LIMIT = 50;

test.each([1, 2, 3, 4, 5])("ratelimit.limit round %p: exactly `limit` of 3 × limit concurrent requests pass", async () => {
  const body = { namespace: uniq("acc"), identifier: "hot", limit: LIMIT, duration: MINUTE };
  const responses = await Promise.all(Array.from({ length: 3 * LIMIT }, () => h.post("/v2/ratelimit.limit", body)));
  expect(responses.every((r) => r.status === 200)).toBe(true);
  expect(responses.filter((r) => r.body.data.success).length).toBe(LIMIT);
  // Remaining values handed out to the passing requests are each used once: LIMIT-1 down to 0.
  const remaining = responses.filter((r) => r.body.data.success).map((r) => r.body.data.remaining).sort((a, b) => a - b);
  expect(remaining).toEqual(Array.from({ length: LIMIT }, (_, i) => i));
});

test("keys.verifyKey: exactly `limit` of 3 × limit concurrent verifications are VALID", async () => {
  const apiId = await createApi(h, "accuracy");
  const { key } = await createKey(h, { apiId, ratelimits: [{ name: "requests", limit: LIMIT, duration: MINUTE, autoApply: true }] });
  const responses = await Promise.all(Array.from({ length: 3 * LIMIT }, () => h.post("/v2/keys.verifyKey", { key })));
  const codes = responses.map((r) => r.body.data.code);
  expect(codes.filter((c) => c === "VALID").length).toBe(LIMIT);
  expect(codes.filter((c) => c === "RATE_LIMITED").length).toBe(2 * LIMIT);
});
