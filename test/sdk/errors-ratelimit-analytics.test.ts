/**
 * The error classes the official SDK (`@unkey/api` 2.5) raises for every served ratelimit.* and
 * analytics.* method (errors.test.ts does the other groups): 400, 401, 403, 404 and 412 each
 * surface as the class the SDK maps that status to, never as its own validation errors. The
 * method list comes from the SDK (scope.ts), so a method without cases fails.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Unkey } from "@unkey/api";
import {
  APIError, BadRequestErrorResponse, ForbiddenErrorResponse, NotFoundErrorResponse, ResponseValidationError, SDKValidationError,
  UnauthorizedErrorResponse, UnkeyError,
} from "@unkey/api/models/errors";
import { startHarness, type Harness } from "../support/harness.ts";
import { sdkClient } from "./client.ts";
import { TEST_ACTOR } from "../support/contract.ts";
import { servedMethods } from "./scope.ts";

let h: Harness;
let root: Unkey;
let unknown: Unkey;
let weak: Unkey;
let noAnalytics: Unkey;
const client = (rootKey: string) => sdkClient(h, rootKey);

beforeAll(async () => {
  h = await startHarness();
  await h.running.services.workspaces.setAnalytics("default", true, TEST_ACTOR);
  root = client(h.rootKey);
  unknown = client("tg_root_unknown");
  weak = client(await h.rootKeyWith(["api.*.read_api"]));
  await h.running.services.workspaces.create({ name: "no-analytics" }, TEST_ACTOR);
  noAnalytics = client(await h.rootKeyWith(["api.*.read_analytics"], "no-analytics"));
  await root.ratelimit.limit({ namespace: "errs", identifier: "x", limit: 1, duration: 60_000 });
});
afterAll(async () => { await h.stop(); });

type ErrorClass = new (...args: never[]) => UnkeyError;
interface Case { status: number; error: ErrorClass; call: () => Promise<unknown> }
const c = (status: number, error: ErrorClass, call: () => Promise<unknown>): Case => ({ status, error, call });
const limitBody = { namespace: "errs", identifier: "x", limit: 1, duration: 60_000 };
const ref = { namespace: "errs", identifier: "nobody" };
const QUERY = "SELECT count() FROM key_verifications_v1";

const CASES: Record<"ratelimit" | "analytics", Record<string, Case[]>> = {
  ratelimit: {
    limit: [
      c(400, BadRequestErrorResponse, () => root.ratelimit.limit({ ...limitBody, limit: 0 })), c(401, UnauthorizedErrorResponse, () => unknown.ratelimit.limit(limitBody)),
      c(403, ForbiddenErrorResponse, () => weak.ratelimit.limit(limitBody)),
    ],
    multiLimit: [
      c(400, BadRequestErrorResponse, () => root.ratelimit.multiLimit([{ ...limitBody, duration: 1 }])), c(401, UnauthorizedErrorResponse, () => unknown.ratelimit.multiLimit([limitBody])),
      c(403, ForbiddenErrorResponse, () => weak.ratelimit.multiLimit([limitBody])),
    ],
    setOverride: [
      c(400, BadRequestErrorResponse, () => root.ratelimit.setOverride({ ...limitBody, duration: 5 })), c(401, UnauthorizedErrorResponse, () => unknown.ratelimit.setOverride(limitBody)),
      c(403, ForbiddenErrorResponse, () => weak.ratelimit.setOverride(limitBody)), c(404, NotFoundErrorResponse, () => root.ratelimit.setOverride({ ...limitBody, namespace: "no_such_ns" })),
    ],
    getOverride: [
      c(400, BadRequestErrorResponse, () => root.ratelimit.getOverride({ ...ref, identifier: "" })), c(401, UnauthorizedErrorResponse, () => unknown.ratelimit.getOverride(ref)),
      c(403, ForbiddenErrorResponse, () => weak.ratelimit.getOverride(ref)), c(404, NotFoundErrorResponse, () => root.ratelimit.getOverride(ref)),
    ],
    listOverrides: [
      c(400, BadRequestErrorResponse, () => root.ratelimit.listOverrides({ namespace: "errs", limit: 0 })), c(401, UnauthorizedErrorResponse, () => unknown.ratelimit.listOverrides({ namespace: "errs" })),
      c(403, ForbiddenErrorResponse, () => weak.ratelimit.listOverrides({ namespace: "errs" })), c(404, NotFoundErrorResponse, () => root.ratelimit.listOverrides({ namespace: "no_such_ns" })),
    ],
    deleteOverride: [
      c(400, BadRequestErrorResponse, () => root.ratelimit.deleteOverride({ ...ref, namespace: "" })), c(401, UnauthorizedErrorResponse, () => unknown.ratelimit.deleteOverride(ref)),
      c(403, ForbiddenErrorResponse, () => weak.ratelimit.deleteOverride(ref)), c(404, NotFoundErrorResponse, () => root.ratelimit.deleteOverride(ref)),
    ],
  },
  analytics: {
    getVerifications: [
      c(400, BadRequestErrorResponse, () => root.analytics.getVerifications({ query: "SELECT * FROM keys" })), c(401, UnauthorizedErrorResponse, () => unknown.analytics.getVerifications({ query: QUERY })),
      c(403, ForbiddenErrorResponse, () => weak.analytics.getVerifications({ query: QUERY })),
      // The SDK declares no 412 for this method: its generic APIError carries the status.
      c(412, APIError, () => noAnalytics.analytics.getVerifications({ query: QUERY })),
    ],
  },
};

test("every served ratelimit.* and analytics.* method has error cases", () => {
  for (const group of ["ratelimit", "analytics"] as const) expect({ group, methods: Object.keys(CASES[group]).sort() }).toEqual({ group, methods: servedMethods(group) });
});

for (const [group, methods] of Object.entries(CASES)) {
  describe(group, () => {
    for (const [method, cases] of Object.entries(methods)) {
      for (const k of cases) {
        test(`${method}: ${k.status} is ${k.error.name}`, async () => {
          const error = await k.call().then(() => undefined, (e: unknown) => e);
          expect(error).not.toBeInstanceOf(ResponseValidationError);
          expect(error).not.toBeInstanceOf(SDKValidationError);
          expect(error).toBeInstanceOf(k.error);
          expect((error as UnkeyError).statusCode).toBe(k.status);
        });
      }
    }
  });
}
