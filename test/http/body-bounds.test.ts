/**
 * The bounds of a request body: each route's limit (10 MiB; 1 MiB on keys.verifyKey and
 * ratelimit(s).limit) answered with 413 in the envelope, logged and counted, whether the size is
 * declared or found while reading a chunked body; the root key checked from the header before a
 * large body is read; and the connection closed after an answer given before the body was read,
 * so that the service stops reading what the client still sends.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../support/harness.ts";
import { expectError, expectInvalid, INVALID_INPUT, ROOT_KEY_NOT_FOUND } from "../support/contract.ts";
import { openExchange, postHead, type RawExchange } from "../support/raw-http.ts";

const MiB = 1024 * 1024;
const TOO_LARGE = "user/bad_request/request_body_too_large";
const HOT_PATHS = ["/v2/keys.verifyKey", "/v2/ratelimit.limit", "/v2/ratelimits.limit"];

let h: Harness;
const logLines: string[] = [];
beforeAll(async () => { h = await startHarness({ logLines }); });
afterAll(async () => { await h.stop(); });

/** Opens a POST to `path` with the bootstrap key (or `key`; null sends none) and the given framing. */
function open(path: string, framing: { contentLength: number } | "chunked", key: string | null = h.rootKey): Promise<RawExchange> {
  return openExchange(h.url, postHead(h.url, path, {
    "content-type": "application/json",
    ...(key === null ? {} : { authorization: `Bearer ${key}` }),
    ...(framing === "chunked" ? { "transfer-encoding": "chunked" } : { "content-length": String(framing.contentLength) }),
  }));
}

/** A JSON body of exactly `bytes` bytes: `{"name":"big","pad":"xxx…"}`. */
function paddedBody(bytes: number): string {
  return JSON.stringify({ name: "big", pad: "x".repeat(bytes - JSON.stringify({ name: "big", pad: "" }).length) });
}

async function metricsText(): Promise<string> {
  return (await fetch(`${h.url}/metrics`)).text();
}

function requestCount(text: string, route: string, status: number): number {
  const series = `tollgate_http_requests_total{route="${route}",status="${status}"} `;
  return Number(text.split("\n").find((l) => l.startsWith(series))?.slice(series.length) ?? 0);
}

describe("413", () => {
  test("an 11 MiB body declared on a 10 MiB route: the envelope with a request id, one access-log line, one count in /metrics; the connection is closed", async () => {
    const before = requestCount(await metricsText(), "/v2/apis.createApi", 413);
    const exchange = await open("/v2/apis.createApi", { contentLength: 11 * MiB });
    const res = await exchange.response;
    expectError(h, res, 413, TOO_LARGE, `The request body is larger than ${10 * MiB} bytes.`);
    expect(res.body.error.title).toBe("Request Entity Too Large");
    expect(res.headers.get("x-request-id")).toBe(res.body.meta.requestId);
    expect(res.headers.get("connection")).toBe("close");
    await exchange.closed;
    expect(requestCount(await metricsText(), "/v2/apis.createApi", 413)).toBe(before + 1);
    const logged = logLines.map((l) => JSON.parse(l)).filter((l) => l.msg === "request" && l.requestId === res.body.meta.requestId);
    expect(logged).toEqual([expect.objectContaining({ method: "POST", route: "/v2/apis.createApi", status: 413 })]);
  });

  test("an 11 MiB body sent by fetch gets the same envelope", async () => {
    const res = await h.post("/v2/apis.createApi", paddedBody(11 * MiB));
    expectError(h, res, 413, TOO_LARGE);
  });

  test("a chunked body over the limit: 413 while the client is still sending, and the service stops reading", async () => {
    for (const [path, limitBytes] of [["/v2/keys.verifyKey", MiB], ["/v2/apis.createApi", 10 * MiB]] as const) {
      const planned = limitBytes + 64 * MiB;
      const exchange = await open(path, "chunked");
      await exchange.sendUntilAnswered(planned, { chunked: true });
      const res = await exchange.response;
      expectError(h, res, 413, TOO_LARGE, `The request body is larger than ${limitBytes} bytes.`);
      await exchange.closed;
      // Socket buffers take a few MiB more than the service reads; far less than what was left to send.
      expect(exchange.sentBodyBytes).toBeLessThan(limitBytes + 32 * MiB);
    }
  });

  test("each route's own limit: the hot routes refuse 1 MiB + 1 byte, a 10 MiB route reads 2 MiB", async () => {
    for (const path of HOT_PATHS) {
      expectError(h, await h.post(path, paddedBody(MiB + 1)), 413, TOO_LARGE, `The request body is larger than ${MiB} bytes.`);
      expectError(h, await h.post(path, paddedBody(MiB)), 400, INVALID_INPUT);
    }
    expectInvalid(h, await h.post("/v2/apis.createApi", paddedBody(2 * MiB)), "body.pad");
    expectInvalid(h, await h.post("/v2/apis.createApi", paddedBody(10 * MiB)), "body.pad");
  });

  test("the API document states the hot routes' limit", async () => {
    const spec = (await (await fetch(`${h.url}/docs/api/openapi.json`)).json()) as { paths: Record<string, { post: Record<string, unknown> }> };
    for (const path of HOT_PATHS) expect(spec.paths[path]!.post["x-max-body-bytes"]).toBe(MiB);
  });
});

describe("the root key is checked before a large body is read", () => {
  test("401: an unknown key with a large declared body is answered before any of the body is sent, on both lanes", async () => {
    for (const path of ["/v2/apis.createApi", "/v2/keys.verifyKey"]) {
      const exchange = await open(path, { contentLength: 512 * 1024 }, "tg_root_unknown");
      const res = await exchange.response;
      expectError(h, res, 401, ROOT_KEY_NOT_FOUND);
      expect(res.headers.get("connection")).toBe("close");
      await exchange.closed;
      expect(exchange.sentBodyBytes).toBe(0);
    }
  });

  test("401: an unknown key with a large chunked body is answered while most of the body is unsent", async () => {
    for (const path of ["/v2/apis.createApi", "/v2/ratelimit.limit"]) {
      const planned = 64 * MiB;
      const exchange = await open(path, "chunked", "tg_root_unknown");
      await exchange.sendUntilAnswered(planned, { chunked: true });
      expectError(h, await exchange.response, 401, ROOT_KEY_NOT_FOUND);
      await exchange.closed;
      expect(exchange.sentBodyBytes).toBeLessThan(planned / 2);
    }
  });

  test("400: a large body without an Authorization header is answered before it is read", async () => {
    const exchange = await open("/v2/keys.createKey", { contentLength: 5 * MiB }, null);
    expectError(h, await exchange.response, 400, "service/application/invalid_input", "Authorization header for 'bearer' scheme");
    expect(exchange.sentBodyBytes).toBe(0);
  });

  test("400: a small bad body with an unknown key is still a bad body, as before (validation first)", async () => {
    for (const path of ["/v2/apis.createApi", "/v2/keys.verifyKey"]) {
      expectError(h, await h.post(path, "{", { key: "tg_root_unknown" }), 400, "user/bad_request/request_body_unreadable");
      expectError(h, await h.post(path, { nope: 1 }, { key: "tg_root_unknown" }), 400, INVALID_INPUT);
    }
  });

  test("a large body with a valid key is read and handled as usual, the key checked once more by the route", async () => {
    expectInvalid(h, await h.post("/v2/apis.createApi", paddedBody(MiB)), "body.pad");
    const apiId = (await h.post("/v2/apis.createApi", { name: "large-bodies" })).body.data.apiId as string;
    const large = { apiId, meta: { blob: "m".repeat(200 * 1024) } };
    const readOnly = await h.rootKeyWith(["api.*.read_api", "api.*.read_key"]);
    expectError(h, await h.post("/v2/keys.createKey", large, { key: readOnly }), 403, "service/authorization/insufficient_permissions");
    const created = await h.post("/v2/keys.createKey", large);
    expect(created.status).toBe(200);
    const verified = await h.post("/v2/keys.verifyKey", { key: created.body.data.key, tags: ["t".repeat(100)] });
    expect(verified.body.data.meta.blob.length).toBe(200 * 1024);
  });
});

describe("after an early answer", () => {
  test("the connection is kept when the whole body was read", async () => {
    const res = await h.post("/v2/apis.createApi", "{");
    expect(res.status).toBe(400);
    expect(res.headers.get("connection")).not.toBe("close");
  });
});
