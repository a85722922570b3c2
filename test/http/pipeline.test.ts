/**
 * The one pipeline (src/http/pipeline.ts) as every operation meets it: the paths Bun's router
 * answers, the end-of-turn batching that the pipeline owns instead of the module, and the success
 * envelope's text.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { envelopeJson, TurnEnd } from "../../src/http/pipeline.ts";
import { okPage } from "../../src/http/envelope.ts";
import { markHoldsRawJson, RawJson } from "../../src/lib/raw-json.ts";
import { startHarness, type Harness } from "../support/harness.ts";

describe("routes", () => {
  let h: Harness;
  beforeAll(async () => { h = await startHarness(); });
  afterAll(() => h.stop());

  test("404: an operation answers at its exact path only, as upstream's; a trailing slash is no route", async () => {
    for (const path of ["/v2/apis.createApi/", "/v2/keys.verifyKey/"]) {
      const res = await h.post(path, { name: "slash", key: "tg_unknown" });
      expect({ path, status: res.status, type: res.body.error?.type?.endsWith("/route_not_found") }).toEqual({ path, status: 404, type: true });
    }
  });

  test("200: a query string does not change the route", async () => {
    expect((await h.post("/v2/apis.createApi?source=test", { name: "query" })).status).toBe(200);
  });
});

describe("TurnEnd", () => {
  test("requests of one turn share one wait, and the next turn gets a new one", async () => {
    const turns = new TurnEnd();
    const first = turns.next();
    expect(turns.next()).toBe(first);
    await first;
    expect(turns.next()).not.toBe(first);
  });

  test("two pipelines' turns are their own: nothing is shared through the module", () => {
    expect(new TurnEnd().next()).not.toBe(new TurnEnd().next());
  });
});

describe("envelopeJson", () => {
  test("a page with pagination: data's stored texts spliced in as they are, pagination after data; the same JSON as the parsed envelope", () => {
    const items = markHoldsRawJson([{ id: "id_1", meta: new RawJson('{"a" : 1}') }]);
    const page = okPage(items, "id_2");
    const text = envelopeJson("req_1", page);
    expect(text).toBe('{"meta":{"requestId":"req_1"},"data":[{"id":"id_1","meta":{"a" : 1}}],"pagination":{"cursor":"id_2","hasMore":true}}');
    expect(JSON.parse(text)).toEqual({ meta: { requestId: "req_1" }, data: [{ id: "id_1", meta: { a: 1 } }], pagination: { cursor: "id_2", hasMore: true } });
    expect(JSON.parse(envelopeJson("req_1", okPage([], undefined)))).toEqual({ meta: { requestId: "req_1" }, data: [], pagination: { hasMore: false } });
  });
});
