import { describe, expect, test } from "bun:test";
import { testServer } from "../../support/route-contract.ts";
import { expectError } from "../../support/contract.ts";

const h = testServer();

describe("200", () => {
  test("GET /v2/liveness answers without a root key", async () => {
    const res = await fetch(`${h.url}/v2/liveness`);
    const body: any = await res.json();
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(body).toEqual({ meta: { requestId: expect.stringMatching(/^req_/) }, data: { message: "we're cooking" } });
    expect(res.headers.get("x-request-id")).toBe(body.meta.requestId);
  });

  test("a wrong Authorization header does not matter", async () => {
    const res = await fetch(`${h.url}/v2/liveness`, { headers: { authorization: "Bearer nope" } });
    expect(res.status).toBe(200);
  });
});

describe("405", () => {
  test("405: POST /v2/liveness answers with Allow", async () => {
    const res = await h.post("/v2/liveness", {});
    expectError(h, res, 405, "user/method_not_allowed/method_not_allowed");
    expect(res.headers.get("allow")).toContain("GET");
  });
});
