/** The official SDK (`@unkey/api` 2.5) against tollgate: every ratelimit.* method parses our answers. */
import { describe, expect, test } from "bun:test";
import { BadRequestErrorResponse, ForbiddenErrorResponse, GoneErrorResponse, NotFoundErrorResponse } from "@unkey/api/models/errors";
import { testServer } from "../support/route-contract.ts";
import { sdkClient, sdkFor } from "./client.ts";
import { insertDeletedNamespace } from "../routes/v2/ratelimit/support.ts";

const h = testServer();
const unkey = sdkFor(h);

const MINUTE = 60_000;
const windowEnd = (durationMs: number) => Math.floor(h.clock.now() / durationMs) * durationMs + durationMs;
const OVERRIDE_ID = expect.stringMatching(/^rlor_/);

describe("ratelimit.* through @unkey/api", () => {
  test("limit: passes, then denies with success false (no exception)", async () => {
    const first = await unkey.ratelimit.limit({ namespace: "sdk.sms", identifier: "user_1", limit: 2, duration: MINUTE });
    expect(first.meta.requestId).toMatch(/^req_/);
    expect(first.data).toEqual({ success: true, limit: 2, remaining: 1, reset: windowEnd(MINUTE) });
    await unkey.ratelimit.limit({ namespace: "sdk.sms", identifier: "user_1", limit: 2, duration: MINUTE });
    const denied = await unkey.ratelimit.limit({ namespace: "sdk.sms", identifier: "user_1", limit: 2, duration: MINUTE, cost: 1 });
    expect(denied.data).toEqual({ success: false, limit: 2, remaining: 0, reset: windowEnd(MINUTE) });
  });

  test("setOverride → getOverride → limit applies it → update keeps the id", async () => {
    const set = await unkey.ratelimit.setOverride({ namespace: "sdk.sms", identifier: "premium_*", limit: 100, duration: 1000 });
    expect(set.data).toEqual({ overrideId: OVERRIDE_ID });
    const got = await unkey.ratelimit.getOverride({ namespace: "sdk.sms", identifier: "premium_*" });
    expect(got.data).toEqual({ overrideId: set.data.overrideId, identifier: "premium_*", limit: 100, duration: 1000 });
    const limited = await unkey.ratelimit.limit({ namespace: "sdk.sms", identifier: "premium_7", limit: 2, duration: MINUTE });
    expect(limited.data).toEqual({ success: true, limit: 100, remaining: 99, reset: windowEnd(1000), overrideId: set.data.overrideId });
    const again = await unkey.ratelimit.setOverride({ namespace: "sdk.sms", identifier: "premium_*", limit: 5, duration: 2000 });
    expect(again.data.overrideId).toBe(set.data.overrideId);
  });

  test("multiLimit: a bare array in, {passed, limits} out; all-or-nothing", async () => {
    const res = await unkey.ratelimit.multiLimit([
      { namespace: "sdk.multi", identifier: "a", limit: 1, duration: MINUTE },
      { namespace: "sdk.sms", identifier: "premium_8", limit: 2, duration: MINUTE, cost: 2 },
    ]);
    expect(res.data).toEqual({
      passed: true,
      limits: [
        { namespace: "sdk.multi", identifier: "a", limit: 1, remaining: 0, reset: windowEnd(MINUTE), passed: true },
        { namespace: "sdk.sms", identifier: "premium_8", limit: 5, remaining: 3, reset: windowEnd(2000), passed: true, overrideId: OVERRIDE_ID },
      ],
    });
    const failed = await unkey.ratelimit.multiLimit([
      { namespace: "sdk.multi", identifier: "b", limit: 1, duration: MINUTE },
      { namespace: "sdk.multi", identifier: "a", limit: 1, duration: MINUTE },
    ]);
    expect(failed.data.passed).toBe(false);
    expect(failed.data.limits.map((l) => l.passed)).toEqual([true, false]);
  });

  test("listOverrides pages through every override and stops after the last page", async () => {
    // The namespace is created by its first limit call; setOverride needs it to exist.
    await unkey.ratelimit.limit({ namespace: "sdk.list", identifier: "x", limit: 1, duration: MINUTE, cost: 0 });
    for (let i = 0; i < 5; i++) await unkey.ratelimit.setOverride({ namespace: "sdk.list", identifier: `user_${i}`, limit: i, duration: MINUTE });
    const pages = await unkey.ratelimit.listOverrides({ namespace: "sdk.list", limit: 2 });
    const seen: string[] = [];
    let pageCount = 0;
    for await (const page of pages) {
      pageCount++;
      expect(page.result.meta.requestId).toMatch(/^req_/);
      expect(page.result.pagination.hasMore).toBe(page.result.pagination.cursor !== undefined);
      for (const o of page.result.data) {
        expect(o).toEqual({ overrideId: OVERRIDE_ID, identifier: o.identifier, limit: Number(o.identifier.slice(5)), duration: MINUTE });
        seen.push(o.identifier);
      }
    }
    expect(pageCount).toBe(3);
    expect(seen.sort()).toEqual(["user_0", "user_1", "user_2", "user_3", "user_4"]);
  });

  test("deleteOverride answers {} and the override is gone", async () => {
    const res = await unkey.ratelimit.deleteOverride({ namespace: "sdk.list", identifier: "user_0" });
    expect(res.meta.requestId).toMatch(/^req_/);
    expect(res.data).toEqual({});
    await expect(unkey.ratelimit.getOverride({ namespace: "sdk.list", identifier: "user_0" })).rejects.toBeInstanceOf(NotFoundErrorResponse);
  });
});

describe("errors are the SDK's typed errors", () => {
  test("400 invalid input", async () => {
    const err = await unkey.ratelimit.limit({ namespace: "sdk.sms", identifier: "x", limit: 0, duration: MINUTE }).catch((e) => e);
    expect(err).toBeInstanceOf(BadRequestErrorResponse);
    expect((err as BadRequestErrorResponse).error.errors.map((e) => e.location)).toContain("body.limit");
  });

  test("403 without create_namespace for a new namespace", async () => {
    const weak = sdkClient(h, await h.rootKeyWith(["ratelimit.*.limit"]));
    await expect(weak.ratelimit.limit({ namespace: "sdk.new", identifier: "x", limit: 1, duration: MINUTE })).rejects.toBeInstanceOf(ForbiddenErrorResponse);
  });

  test("404 for an override of an unknown namespace", async () => {
    const err = await unkey.ratelimit.setOverride({ namespace: "sdk.none", identifier: "x", limit: 1, duration: MINUTE }).catch((e) => e);
    expect(err).toBeInstanceOf(NotFoundErrorResponse);
    expect((err as NotFoundErrorResponse).error.detail).toBe("This namespace does not exist.");
  });

  test("410 for a deleted namespace", async () => {
    await insertDeletedNamespace(h, "sdk.deleted");
    const err = await unkey.ratelimit.limit({ namespace: "sdk.deleted", identifier: "x", limit: 1, duration: MINUTE }).catch((e) => e);
    expect(err).toBeInstanceOf(GoneErrorResponse);
    expect((err as GoneErrorResponse).error.status).toBe(410);
  });
});
