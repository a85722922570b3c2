/**
 * The cap on live wildcard overrides per namespace (TOLLGATE_RATELIMIT_WILDCARD_OVERRIDES = 3
 * here): every check on a namespace tries each of its wildcards, so a caller who may set overrides
 * cannot make every other caller's checks slow. Replacing, deleting and exact overrides stay free.
 */
import { describe, expect, test } from "bun:test";
import { testServer } from "../../../support/route-contract.ts";
import { expectError } from "../../../support/contract.ts";
import { auditEvents, createNamespace, MINUTE, setOverride } from "./support.ts";

const CAP = 3;
const PRECONDITION = "service/application/precondition_failed";
const CAP_DETAIL = `This namespace has ${CAP} wildcard overrides (identifiers with '*'), the most it may have. Delete one, or change an existing one.`;

const h = testServer({ env: { TOLLGATE_RATELIMIT_WILDCARD_OVERRIDES: String(CAP) } });

const set = (path: string, namespace: string, identifier: string, limit = 5) => h.post(path, { namespace, identifier, limit, duration: MINUTE });
const limitOf = async (namespace: string, identifier: string) =>
  (await h.post("/v2/ratelimit.limit", { namespace, identifier, limit: 100, duration: MINUTE, cost: 0 })).body.data.limit as number;
const overrideCount = (namespaceId: string) => h.records.count("ratelimit_overrides", "namespace_id = ? AND deleted_at IS NULL", namespaceId);

/** A namespace holding exactly CAP wildcard overrides, `w0*` … `w2*` with limits 10, 11, 12. */
async function fullNamespace(): Promise<string> {
  const ns = await createNamespace(h);
  for (let i = 0; i < CAP; i++) await setOverride(h, ns, `w${i}*`, 10 + i);
  return ns;
}

describe("200: within the cap", () => {
  test("up to the cap, wildcards are stored and applied", async () => {
    const ns = await fullNamespace();
    expect(await limitOf(ns, "w2-someone")).toBe(12);
  });

  test("at the cap: exact overrides, and replacing a wildcard (same id, new limit), are still accepted", async () => {
    const ns = await fullNamespace();
    expect(await setOverride(h, ns, "exact-1", 7)).toMatch(/^rlor_/);
    expect(await limitOf(ns, "exact-1")).toBe(7);
    const before = (await h.post("/v2/ratelimit.getOverride", { namespace: ns, identifier: "w1*" })).body.data.overrideId;
    expect(await setOverride(h, ns, "w1*", 42)).toBe(before);
    expect(await limitOf(ns, "w1-someone")).toBe(42);
  });

  test("after a wildcard is deleted, a new one fits; the deleted one no longer applies", async () => {
    const ns = await fullNamespace();
    expect((await h.post("/v2/ratelimit.deleteOverride", { namespace: ns, identifier: "w0*" })).status).toBe(200);
    expect(await limitOf(ns, "w0-someone")).toBe(100);
    await setOverride(h, ns, "new*", 9);
    expect(await limitOf(ns, "new-someone")).toBe(9);
  });

  test("the cap is per namespace", async () => {
    await fullNamespace();
    const other = await createNamespace(h);
    await setOverride(h, other, "w0*", 1);
    expect(await limitOf(other, "w0-x")).toBe(1);
  });
});

describe("412: a new wildcard beyond the cap", () => {
  for (const path of ["/v2/ratelimit.setOverride", "/v2/ratelimits.setOverride"]) {
    test(`${path}: refused in the envelope, nothing stored, nothing applied`, async () => {
      const ns = await fullNamespace();
      const res = await set(path, ns, "over*");
      expectError(h, res, 412, PRECONDITION, CAP_DETAIL);
      expect(await overrideCount(ns)).toBe(CAP);
      expect(await limitOf(ns, "over-someone")).toBe(100);
      expect(await auditEvents(h, "ratelimit.set_override", "over*")).toBe(0);
    });
  }

  test("the count survives a restart (the index is read back from SQLite)", async () => {
    const ns = await fullNamespace();
    await h.restart();
    expectError(h, await set("/v2/ratelimit.setOverride", ns, "over*"), 412, PRECONDITION, CAP_DETAIL);
    expect(await limitOf(ns, "w2-someone")).toBe(12);
  });
});
