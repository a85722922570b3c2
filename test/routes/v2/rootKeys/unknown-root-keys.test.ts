/**
 * Unknown root keys through the real app, on either backend (TOLLGATE_TEST_BACKEND): 200 requests
 * with one bad key cost one lookup of the records (counted by the authenticator, whose lookups are
 * those sent), and a root key created with that value afterwards works on the next request.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startHarness, type Harness } from "../../../support/harness.ts";
import { TEST_ACTOR } from "../../../support/contract.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.stop();
});

const BAD = "tg_root_unknown_flood_0000000001";

test("200 requests with one unknown root key cost one lookup; a root key created with it then works at once", async () => {
  const listApis = () => h.post("/v2/apis.listApis", {}, { key: BAD });
  const before = h.running.services.auth.lookups.sent;
  const answers = await Promise.all(Array.from({ length: 200 }, listApis));
  expect(answers.map((r) => r.status)).toEqual(Array(200).fill(401));
  expect(h.running.services.auth.lookups.sent - before).toBe(1);

  await h.running.services.workspaces.createRootKey({ workspace: "default", name: "late", permissions: ["api.*.read_api"], value: BAD }, TEST_ACTOR);
  expect((await listApis()).status).toBe(200);
});
