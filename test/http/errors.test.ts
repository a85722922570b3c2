/** The error envelope of cross-cutting failures: unreadable and oversized bodies, unknown routes, `type` URLs and their docs pages. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../support/harness.ts";
import { expectError, expectInvalid } from "../support/contract.ts";
import { ERROR_CATALOGUE, errorTypePath, type ErrorCode } from "../../src/errors/catalogue.ts";

let h: Harness;
beforeAll(async () => { h = await startHarness(); });
afterAll(async () => { await h.stop(); });

const MiB = 1024 * 1024;
const raw = (path: string, init: RequestInit & { headers?: Record<string, string> } = {}) =>
  fetch(h.url + path, { method: "POST", ...init, headers: { authorization: `Bearer ${h.rootKey}`, "content-type": "application/json", ...init.headers } });

describe("400", () => {
  test("malformed JSON is request_body_unreadable with errors []", async () => {
    const res = await h.post("/v2/apis.createApi", "{\"name\": ");
    expectError(h, res, 400, "user/bad_request/request_body_unreadable");
    expect(res.body.error.title).toBe("Bad Request");
    expect(res.body.error.detail.startsWith("The request body is not valid JSON")).toBe(true);
    expect(res.body.error.errors).toEqual([]);
  });

  test("malformed JSON is reported before authentication", async () => {
    expectError(h, await h.post("/v2/apis.createApi", "not json", { key: null }), 400, "user/bad_request/request_body_unreadable");
  });

  test("a validation failure lists each field with location and message", async () => {
    const res = await h.post("/v2/keys.createKey", { apiId: "x", prefix: "" });
    expectInvalid(h, res, "body.apiId");
    expectInvalid(h, res, "body.prefix");
    expect(res.body.error.title).toBe("Bad Request");
    for (const e of res.body.error.errors) expect(typeof e.message).toBe("string");
  });

  test("a body exactly 1 MiB long is read (and then validated)", async () => {
    const padding = "x".repeat(MiB - JSON.stringify({ name: "abc", pad: "" }).length);
    const body = JSON.stringify({ name: "abc", pad: padding });
    expect(Buffer.byteLength(body)).toBe(MiB);
    expectInvalid(h, await h.post("/v2/apis.createApi", body), "body.pad");
  });

  test("a body nested deeper than 100 levels is invalid_input, on the hot operations and the others alike", async () => {
    const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
    for (const path of ["/v2/apis.createApi", "/v2/keys.verifyKey", "/v2/ratelimit.limit"]) {
      const res = await h.post(path, `{"name":${nested(5000)}}`);
      expectInvalid(h, res, "body");
      expect(res.body.error.detail).toBe("The request body is nested deeper than 100 levels of objects and arrays.");
    }
    // 100 levels (the body object and 99 arrays) is read, and then validated as usual; 101 is not.
    expectInvalid(h, await h.post("/v2/apis.createApi", `{"name":${nested(99)}}`), "body.name");
    const deeper = await h.post("/v2/keys.verifyKey", `{"key":${nested(100)}}`);
    expect(deeper.body.error.detail).toBe("The request body is nested deeper than 100 levels of objects and arrays.");
    // Many brackets side by side are not deep: read, then validated.
    expectInvalid(h, await h.post("/v2/apis.createApi", `{"name":[${Array(300).fill("[]").join(",")}]}`), "body.name");
  });

  test("a route whose body may be left out still refuses a sent body that is not an object", async () => {
    for (const path of ["/v2/permissions.listPermissions", "/v2/permissions.listRoles", "/v2/identities.listIdentities"]) {
      expect((await raw(path, {})).status).toBe(200);
      expect((await h.post(path, {})).status).toBe(200);
      for (const body of ['"text"', '""', "5", "true", "null", "[]"]) expectError(h, await h.post(path, body), 400, "service/application/invalid_input");
    }
  });

  test("the body is read as JSON whatever the content type", async () => {
    const res = await raw("/v2/apis.createApi", { body: JSON.stringify({ name: "typeless" }), headers: { "content-type": "text/plain" } });
    expect(res.status).toBe(200);
  });
});

describe("404", () => {
  test("an unknown route answers in the envelope", async () => {
    const res = await h.post("/v2/keys.doesNotExist", {});
    expectError(h, res, 404, "user/not_found/route_not_found", "No route answers this method and path.");
    expect(res.body.error.title).toBe("Not Found");
    expect("errors" in res.body.error).toBe(false);
  });

  test("POST /metrics, known only to allowed clients for GET, stays 404", async () => {
    expectError(h, await h.post("/metrics", {}), 404, "user/not_found/route_not_found");
  });

  test("the upstream path style without the dot is not a route", async () => {
    expectError(h, await h.post("/v2/keys/createKey", {}), 404, "user/not_found/route_not_found");
  });
});

describe("405", () => {
  test("405: GET of a POST route answers in the envelope with Allow: POST", async () => {
    const res = await fetch(`${h.url}/v2/keys.createKey`);
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
    const body = (await res.json()) as any;
    expect(body.error).toEqual({
      title: "Method Not Allowed", status: 405, detail: "GET is not allowed here; the path answers POST.",
      type: `${h.url}/docs/api-reference/errors-v2/user/method_not_allowed/method_not_allowed`,
    });
    expect(res.headers.get("x-request-id")).toBe(body.meta.requestId);
  });

  test("405: GET of a hot route (served by Bun's router for POST) too", async () => {
    const res = await fetch(`${h.url}/v2/keys.verifyKey`);
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
  });

  test("405: DELETE of GET /v2/liveness names GET", async () => {
    const res = await fetch(`${h.url}/v2/liveness`, { method: "DELETE" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toContain("GET");
  });

  test("the error's docs page exists", async () => {
    const page = await fetch(`${h.url}/docs/api-reference/errors-v2/user/method_not_allowed/method_not_allowed`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("err:user:method_not_allowed:method_not_allowed");
  });
});

describe("413", () => {
  test("a body over the route's limit (Content-Length) answers 413 in the envelope", async () => {
    const res = await h.post("/v2/keys.verifyKey", JSON.stringify({ key: "big", pad: "x".repeat(MiB) }));
    expectError(h, res, 413, "user/bad_request/request_body_too_large", `The request body is larger than ${MiB} bytes.`);
    expect(res.body.error.title).toBe("Request Entity Too Large");
  });

  test("a chunked body over the route's limit (no Content-Length) answers 413 too", async () => {
    const chunk = new TextEncoder().encode("x".repeat(256 * 1024));
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < 5; i++) c.enqueue(chunk);
        c.close();
      },
    });
    const res = await raw("/v2/keys.verifyKey", { body: stream });
    expect(res.status).toBe(413);
    const body: any = await res.json();
    expect(body.error.type).toBe(`${h.url}/docs/api-reference/errors-v2/user/bad_request/request_body_too_large`);
    expect(body.meta.requestId).toBe(res.headers.get("x-request-id"));
  });

  test("size is checked before authentication", async () => {
    const res = await h.post("/v2/keys.verifyKey", "x".repeat(MiB + 1), { key: null });
    expectError(h, res, 413, "user/bad_request/request_body_too_large");
  });
});

describe("type URLs", () => {
  test("are <base>/docs/api-reference/errors-v2/<system>/<category>/<specific> and answer 200 HTML", async () => {
    const bodies = [
      await h.post("/v2/apis.createApi", {}),
      await h.post("/v2/apis.createApi", { name: "abc" }, { key: null, headers: { authorization: "Basic x" } }),
      await h.post("/v2/apis.createApi", { name: "abc" }, { key: "tg_root_unknown" }),
      await h.post("/v2/apis.getApi", { apiId: "api_missing" }),
      await h.post("/v2/apis.createApi", { name: "abc" }, { key: await h.rootKeyWith(["api.*.read_api"]) }),
      await h.post("/v2/nope.nope", {}),
      await h.post("/v2/apis.createApi", "{"),
    ];
    const types = bodies.map((r) => r.body.error.type as string);
    expect(types.map((t) => t.slice(`${h.url}/docs/api-reference/errors-v2/`.length))).toEqual([
      "service/application/invalid_input",
      "service/authentication/malformed",
      "service/authentication/key_not_found",
      "service/data/api_not_found",
      "service/authorization/insufficient_permissions",
      "user/not_found/route_not_found",
      "user/bad_request/request_body_unreadable",
    ]);
    for (const type of types) {
      const page = await fetch(type);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
      const html = await page.text();
      expect(html.startsWith("<!doctype html>")).toBe(true);
      expect(html).toContain(`err:${type.split("/errors-v2/")[1]!.replaceAll("/", ":")}`);
    }
  });

  test("every error's page shows its cause and what to do, each its own text", async () => {
    const pageText = (html: string) => html.replace(/<[^>]+>/g, "").replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n)));
    for (const code of Object.keys(ERROR_CATALOGUE) as ErrorCode[]) {
      const { cause, remedy } = ERROR_CATALOGUE[code];
      const html = await (await fetch(`${h.url}/docs/api-reference/errors-v2/${errorTypePath(code)}`)).text();
      const text = pageText(html);
      expect({ code, cause: text.includes(`Cause${cause.replaceAll("`", "")}`), remedy: text.includes(`What to do${remedy.replaceAll("`", "")}`) })
        .toEqual({ code, cause: true, remedy: true });
      expect({ code, distinct: remedy.length > 0 && remedy !== cause }).toEqual({ code, distinct: true });
    }
  });

  test("an unknown type path answers 404", async () => {
    expect((await fetch(`${h.url}/docs/api-reference/errors-v2/service/data/nothing_here`)).status).toBe(404);
  });
});

describe("content type", () => {
  test("errors are application/problem+json when the client accepts it, else application/json", async () => {
    const problem = await raw("/v2/apis.getApi", { body: JSON.stringify({ apiId: "api_missing" }), headers: { accept: "application/problem+json" } });
    expect(problem.headers.get("content-type")).toBe("application/problem+json");
    const plain = await raw("/v2/apis.getApi", { body: JSON.stringify({ apiId: "api_missing" }), headers: { accept: "application/json" } });
    expect(plain.headers.get("content-type")).toBe("application/json");
  });

  test("validation errors are always application/json", async () => {
    const res = await raw("/v2/apis.getApi", { body: "{}", headers: { accept: "*/*" } });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toBe("application/json");
  });
});
