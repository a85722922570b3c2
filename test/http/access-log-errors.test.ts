/**
 * The access log's error lines: every 4xx names its catalogue code, and the root key's id and
 * workspace when the request was authenticated (nothing when it was not), on the Elysia routes
 * and the hot routes alike; a 200 line keeps exactly its fields; no key string or hash anywhere.
 * The text format carries the same fields.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { EARLY_AUTH_BODY_BYTES } from "../../src/http/body-reader.ts";
import { sha256Base64 } from "../../src/lib/hashing.ts";
import { startHarness, type ApiResponse, type Harness } from "../support/harness.ts";
import { parseTextLine } from "../support/text-log.ts";

type Line = Record<string, unknown>;
const REQUEST_FIELDS = ["durationMs", "level", "method", "msg", "requestId", "route", "status", "time"];

interface Run {
  /** The access-log line of each named request, read after the service stopped (so every line is written). */
  lines: Record<string, Line>;
  all: string[];
  secrets: string[];
  rootKeyId: string;
  workspaceId: string;
}

/** Sends one request of each kind through a service logging in `format`, then stops it. */
async function run(format: "json" | "text"): Promise<Run> {
  const all: string[] = [];
  const h: Harness = await startHarness({ logLines: all, env: { TOLLGATE_LOG_FORMAT: format } });
  const workspaces = h.running.services.workspaces;
  const reader = await workspaces.createRootKey({ workspace: "default", name: "reader", permissions: ["api.*.read_api"] }, { type: "cli", id: "test" });
  const workspaceId = (await workspaces.get("default")).id;
  const sent: Record<string, ApiResponse> = {};
  try {
    sent.forbidden = await h.post("/v2/apis.createApi", { name: "nope" }, { key: reader.key });
    sent.notFound = await h.post("/v2/apis.getApi", { apiId: "api_doesnotexist" }, { key: reader.key });
    sent.missingHeader = await h.post("/v2/apis.createApi", { name: "nope" }, { key: null });
    sent.invalidBody = await h.post("/v2/apis.createApi", { name: 5 }, { key: reader.key });
    sent.unknownKey = await h.post("/v2/apis.createApi", { name: "nope" }, { key: "tg_root_notAKeyAtAll123" });
    sent.hotForbidden = await h.post("/v2/ratelimits.limit", { namespace: "n", identifier: "i", limit: 1, duration: 1000 }, { key: reader.key });
    sent.hotUnknownKey = await h.post("/v2/keys.verifyKey", { key: "some_key_12345" }, { key: "tg_root_notAKeyAtAll123" });
    // Past EARLY_AUTH_BODY_BYTES too the root key is checked before the body is read; then the body fails validation.
    sent.largeInvalidBody = await h.post("/v2/apis.createApi", { name: "big", pad: "x".repeat(EARLY_AUTH_BODY_BYTES) }, { key: reader.key });
    sent.created = await h.post("/v2/apis.createApi", { name: "logged" });
    sent.hotOk = await h.post("/v2/keys.verifyKey", { key: "some_key_12345" });
  } finally {
    await h.stop();
  }
  const parsed = all.map((l) => (format === "json" ? JSON.parse(l) : parseTextLine(l)) as Line);
  const byRequestId = new Map(parsed.filter((l) => l.msg === "request").map((l) => [l.requestId, l]));
  const lines = Object.fromEntries(Object.entries(sent).map(([name, res]) => [name, byRequestId.get(res.headers.get("x-request-id"))!]));
  const secrets = [h.rootKey, reader.key, sha256Base64(h.rootKey), sha256Base64(reader.key)];
  return { lines, all, secrets, rootKeyId: reader.id, workspaceId };
}

for (const format of ["json", "text"] as const) {
  describe(`TOLLGATE_LOG_FORMAT=${format}`, () => {
    let r: Run;
    beforeAll(async () => { r = await run(format); });
    const who = () => ({ rootKeyId: r.rootKeyId, workspaceId: r.workspaceId });

    test("403: the code, the root key's id and its workspace", () => {
      expect(r.lines.forbidden).toMatchObject({ status: 403, errorCode: "insufficient_permissions", ...who() });
    });

    test("404: the code, the root key's id and its workspace", () => {
      expect(r.lines.notFound).toMatchObject({ status: 404, errorCode: "api_not_found", ...who() });
    });

    test("400 without an Authorization header: the code alone", () => {
      expect(r.lines.missingHeader).toMatchObject({ status: 400, errorCode: "invalid_input" });
      expect(r.lines.missingHeader).not.toContainAnyKeys(["rootKeyId", "workspaceId"]);
    });

    test("400 for a bad body with a valid root key: the code, the root key's id and its workspace (the key is checked from the header first)", () => {
      expect(r.lines.invalidBody).toMatchObject({ status: 400, errorCode: "invalid_input", ...who() });
    });

    test("401 for an unknown root key: the code alone", () => {
      expect(r.lines.unknownKey).toMatchObject({ status: 401, errorCode: "root_key_not_found" });
      expect(r.lines.unknownKey).not.toContainAnyKeys(["rootKeyId", "workspaceId"]);
    });

    test("400 for a large bad body, whose root key was checked before it was read: the code, the root key's id and its workspace", () => {
      expect(r.lines.largeInvalidBody).toMatchObject({ status: 400, errorCode: "invalid_input", ...who() });
    });

    test("the hot routes' error lines carry the same fields", () => {
      expect(r.lines.hotForbidden).toMatchObject({ route: "/v2/ratelimits.limit", status: 403, errorCode: "insufficient_permissions", ...who() });
      expect(r.lines.hotUnknownKey).toMatchObject({ route: "/v2/keys.verifyKey", status: 401, errorCode: "root_key_not_found" });
      expect(r.lines.hotUnknownKey).not.toContainAnyKeys(["rootKeyId", "workspaceId"]);
    });

    test("200 lines keep exactly their fields, on both paths", () => {
      for (const ok of [r.lines.created, r.lines.hotOk]) {
        expect(ok).toMatchObject({ level: "info", status: 200 });
        expect(Object.keys(ok!).sort()).toEqual(REQUEST_FIELDS);
      }
    });

    test("the start line names the URL and the data dir", () => {
      const start = r.all.map((l) => (format === "json" ? JSON.parse(l) : parseTextLine(l)) as Line).find((l) => l.msg === "tollgate listening");
      expect(start).toMatchObject({ level: "info", url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/), dataDir: expect.any(String) });
    });

    test("no root key, nor its hash, appears in any line", () => {
      const text = r.all.join("\n");
      for (const secret of r.secrets) expect(text).not.toContain(secret);
    });
  });
}
