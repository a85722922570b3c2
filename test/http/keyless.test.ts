/**
 * Callers without a valid root key cost almost nothing: a request is authenticated from its header
 * before any of its body is waited for, answered at once with its usual error and
 * `Connection: close`, and never holds a slot of the in-flight cap; the shares of that cap keep one
 * client address from taking it all (behind a trusted proxy, by the forwarded address), and slots
 * of clients that go away are given back. The body deadline is long here, so that an answer that
 * waited for the body would fail the test by its time limit.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHarness, type Harness } from "../support/harness.ts";
import { expectError } from "../support/contract.ts";
import { openExchange, postHead, type RawExchange } from "../support/raw-http.ts";

const OVERLOADED = "service/application/overloaded";
const SLOW_BODY_BYTES = 60_000;

/** A POST to keys.verifyKey declaring a 60,000-byte body, with `authorization` as given (null: none), and its first bytes. */
async function slowBody(h: Harness, authorization: string | null, path = "/v2/keys.verifyKey", headers: Record<string, string> = {}): Promise<RawExchange> {
  const exchange = await openExchange(h.url, postHead(h.url, path, {
    ...(authorization === null ? {} : { authorization }),
    "content-type": "application/json",
    "content-length": String(SLOW_BODY_BYTES),
    ...headers,
  }));
  await exchange.write('{"key":"');
  return exchange;
}

describe("a request without a valid root key is answered before its body arrives, and its connection closed", () => {
  let h: Harness;
  let revoked: string;
  beforeAll(async () => {
    h = await startHarness({ env: { TOLLGATE_BODY_TIMEOUT_MS: "600000" } });
    const workspaces = h.running.services.workspaces;
    const made = await workspaces.createRootKey({ workspace: "default", name: "gone", permissions: ["api.*.verify_key"] }, { type: "cli", id: "test" });
    await workspaces.revokeRootKey(made.id, { type: "cli", id: "test" });
    revoked = made.key;
  });
  afterAll(async () => { await h.stop(); });

  const cases: Array<[string, () => string | null, number, string]> = [
    ["missing", () => null, 400, "service/application/invalid_input"],
    ["malformed", () => "Basic dXNlcjpwYXNz", 400, "service/authentication/malformed"],
    ["unknown", () => "Bearer tg_root_notAKeyAtAll123", 401, "service/authentication/key_not_found"],
    ["revoked", () => `Bearer ${revoked}`, 401, "service/authentication/key_not_found"],
  ];
  for (const [name, authorization, status, type] of cases) {
    test(`${name} root key: ${status} at once, Connection: close, the connection closed`, async () => {
      for (const path of ["/v2/keys.verifyKey", "/v2/apis.createApi"]) {
        const exchange = await slowBody(h, authorization(), path);
        const res = await exchange.response;
        expectError(h, res, status, type);
        expect(res.headers.get("x-request-id")).toBe(res.body.meta.requestId);
        expect(res.headers.get("connection")).toBe("close");
        expect(exchange.sentBodyBytes).toBeLessThan(SLOW_BODY_BYTES);
        await exchange.closed;
      }
    });
  }

  test("a chunked body is not waited for either", async () => {
    const exchange = await openExchange(h.url, postHead(h.url, "/v2/keys.verifyKey", { "transfer-encoding": "chunked" }));
    await exchange.write('8\r\n{"key":"\r\n');
    const res = await exchange.response;
    expectError(h, res, 400, "service/application/invalid_input");
    expect(res.headers.get("connection")).toBe("close");
    await exchange.closed;
  });

  test("a whole body that is already there still fails validation first (400 before 401), and closes too", async () => {
    const res = await h.post("/v2/apis.createApi", { name: 5 }, { key: "tg_root_notAKeyAtAll123" });
    expectError(h, res, 400, "service/application/invalid_input");
    expect(res.headers.get("connection")).toBe("close");
    expectError(h, await h.post("/v2/apis.createApi", { name: "fine" }, { key: "tg_root_notAKeyAtAll123" }), 401, "service/authentication/key_not_found");
  });

  test("a valid root key's slow body is waited for and answered as usual", async () => {
    const body = JSON.stringify({ name: "slow but fine" });
    const exchange = await openExchange(h.url, postHead(h.url, "/v2/apis.createApi", { authorization: `Bearer ${h.rootKey}`, "content-length": String(body.length) }));
    await exchange.write(body.slice(0, 4));
    // Nothing comes back while the body is incomplete: the rest is then read and answered.
    const early = await Promise.race([exchange.response.then(() => "answered"), fetch(`${h.url}/v2/liveness`).then(() => "not yet")]);
    expect(early).toBe("not yet");
    await exchange.write(body.slice(4));
    const res = await exchange.response;
    expect(res.status).toBe(200);
    expect(res.headers.get("connection")).toBeNull();
    exchange.end();
  });
});

describe("the shares of the in-flight cap", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ env: { TOLLGATE_BODY_TIMEOUT_MS: "600000", TOLLGATE_MAX_REQUESTS_IN_FLIGHT: "8", TOLLGATE_TRUSTED_PROXIES: "127.0.0.1" } });
  });
  afterAll(async () => { await h.stop(); });

  test("a flood of keyless slow bodies, three times the cap, holds no slot: an authenticated request still gets in", async () => {
    // A caller that has been served before: a cluster node knows its root key without a lookup, which a flood of unknown keys may crowd out.
    expect((await h.post("/v2/keys.verifyKey", { key: "some_key_12345" })).status).toBe(200);
    const flood = await Promise.all(Array.from({ length: 24 }, (_, i) => slowBody(h, i % 2 === 0 ? null : "Bearer tg_root_notAKeyAtAll123")));
    const verified = await h.post("/v2/keys.verifyKey", { key: "some_key_12345" });
    expect(verified.status).toBe(200);
    expect(verified.body.data.code).toBe("NOT_FOUND");
    for (const exchange of flood) {
      expect((await exchange.response).headers.get("connection")).toBe("close");
      await exchange.closed;
    }
  });

  test("one address may hold half the cap; another (forwarded by a trusted proxy) still gets in; slots of clients that went away come back", async () => {
    const auth = `Bearer ${h.rootKey}`;
    const from = (address: string) => ({ "x-forwarded-for": address });
    const held = await Promise.all(Array.from({ length: 4 }, () => slowBody(h, auth, "/v2/apis.createApi", from("192.0.2.1"))));
    // The fifth from the same address is refused at once, its connection closed.
    const refused = await slowBody(h, auth, "/v2/apis.createApi", from("192.0.2.1"));
    const res = await refused.response;
    expectError(h, res, 503, OVERLOADED);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(res.headers.get("connection")).toBe("close");
    await refused.closed;
    // Another client behind the same proxy gets in.
    const other = await h.post("/v2/keys.verifyKey", { key: "some_key_12345" }, { headers: from("192.0.2.2") });
    expect(other.status).toBe(200);
    // The four go away mid-body: their slots are given back, so four more from that address are held again.
    for (const exchange of held) exchange.end();
    await Promise.all(held.map((exchange) => exchange.closed));
    const again: RawExchange[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await waitAdmitted(h, auth, from("192.0.2.1"));
      again.push(res);
    }
    for (const exchange of again) exchange.end();
    // Every slot comes back once its client is gone: nothing leaks.
    await untilNoOperationsInFlight(h);
  });
});

/** Waits, one scrape after another, until /metrics shows no v2 operation holding a slot. */
async function untilNoOperationsInFlight(h: Harness): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    const text = await (await fetch(`${h.url}/metrics`)).text();
    const held = [...text.matchAll(/^tollgate_http_operations_in_flight\{class="\w+"\} (\d+)$/gm)].map((m) => Number(m[1]));
    if (held.length === 2 && held.every((n) => n === 0)) return;
  }
  throw new Error("slots stayed held after their clients went away");
}

/** Opens slow bodies until one is not refused at once (a client's slot is given back when its read fails, a turn or two after it closed). */
async function waitAdmitted(h: Harness, auth: string, headers: Record<string, string>): Promise<RawExchange> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const exchange = await slowBody(h, auth, "/v2/apis.createApi", headers);
    const verdict = await Promise.race([exchange.response.then((r) => r.status), fetch(`${h.url}/v2/liveness`).then(() => 0)]);
    if (verdict === 0) return exchange;
    exchange.end();
  }
  throw new Error("a slot was never given back");
}
