/**
 * The root-key principal cache is keyed by the Authorization header as sent; only the canonical
 * header is cached, so a caller cannot grow it with padded variants of one valid header.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startHarness, type Harness } from "../../support/harness.ts";

let h: Harness;
beforeAll(async () => { h = await startHarness(); });
afterAll(() => h.stop());

test("padded variants of a valid header authenticate but are not cached; the canonical one is cached once", () => {
  const auth = h.running.services.auth;
  const before = auth.cachedPrincipals;
  const canonical = auth.authenticate(`Bearer ${h.rootKey}`);
  expect(auth.cachedPrincipals).toBe(before + 1);
  for (let i = 0; i < 200; i++) {
    const padded = i % 2 === 0 ? `Bearer${" ".repeat(i + 2)}${h.rootKey}` : ` Bearer\t${"\t".repeat(i)}${h.rootKey} `;
    expect(auth.authenticate(padded).workspaceId).toBe(canonical.workspaceId);
  }
  expect(auth.cachedPrincipals).toBe(before + 1);
});
