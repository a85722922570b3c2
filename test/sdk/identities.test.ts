/** The official SDK (`@unkey/api` 2.5) against tollgate: every identities.* method parses our answers. */
import { describe, expect, test } from "bun:test";
import { ConflictErrorResponse, ForbiddenErrorResponse, NotFoundErrorResponse } from "@unkey/api/models/errors";
import { testServer } from "../support/route-contract.ts";
import { sdkClient, sdkFor } from "./client.ts";

const h = testServer();
const unkey = sdkFor(h);

const RL_ID = expect.stringMatching(/^rl_/);

describe("identities.* through @unkey/api", () => {
  test("createIdentity → getIdentity by externalId and id", async () => {
    const created = await unkey.identities.createIdentity({
      externalId: "sdk_user",
      meta: { plan: "pro" },
      ratelimits: [{ name: "requests", limit: 100, duration: 60_000, autoApply: true }],
    });
    expect(created.meta.requestId).toMatch(/^req_/);
    const identityId = created.data.identityId;
    expect(identityId).toMatch(/^id_/);
    const expected = {
      id: identityId, externalId: "sdk_user", meta: { plan: "pro" },
      ratelimits: [{ id: RL_ID, name: "requests", limit: 100, duration: 60_000, autoApply: true }],
    };
    expect((await unkey.identities.getIdentity({ identity: "sdk_user" })).data).toEqual(expected);
    expect((await unkey.identities.getIdentity({ identity: identityId })).data).toEqual(expected);
  });

  test("updateIdentity returns the full Identity", async () => {
    const { data } = await unkey.identities.updateIdentity({
      identity: "sdk_user",
      meta: { plan: "enterprise" },
      ratelimits: [{ name: "requests", limit: 5, duration: 1000, autoApply: false }, { name: "tokens", limit: 10, duration: 60_000, autoApply: true }],
    });
    expect(data).toEqual({
      id: expect.stringMatching(/^id_/), externalId: "sdk_user", meta: { plan: "enterprise" },
      ratelimits: [
        { id: RL_ID, name: "requests", limit: 5, duration: 1000, autoApply: false },
        { id: RL_ID, name: "tokens", limit: 10, duration: 60_000, autoApply: true },
      ],
    });
  });

  test("listIdentities pages through every identity and stops after the last page", async () => {
    for (let i = 0; i < 4; i++) await unkey.identities.createIdentity({ externalId: `sdk_page_${i}` });
    const pages = await unkey.identities.listIdentities({ limit: 2 });
    const seen: string[] = [];
    let pageCount = 0;
    for await (const page of pages) {
      pageCount++;
      expect(page.result.meta.requestId).toMatch(/^req_/);
      seen.push(...page.result.data.map((i) => i.externalId));
      expect(page.result.pagination.hasMore).toBe(page.result.pagination.cursor !== undefined);
    }
    expect(pageCount).toBe(3);
    expect(seen.sort()).toEqual(["sdk_page_0", "sdk_page_1", "sdk_page_2", "sdk_page_3", "sdk_user"]);
  });

  test("listIdentities with search", async () => {
    const first = await unkey.identities.listIdentities({ search: "PAGE_3" });
    expect(first.result.data.map((i) => i.externalId)).toEqual(["sdk_page_3"]);
    expect(first.result.pagination).toEqual({ hasMore: false });
  });

  test("deleteIdentity parses; the identity is then NotFoundErrorResponse", async () => {
    const res = await unkey.identities.deleteIdentity({ identity: "sdk_page_0" });
    expect(res.meta.requestId).toMatch(/^req_/);
    const error = await unkey.identities.getIdentity({ identity: "sdk_page_0" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundErrorResponse);
    expect((error as NotFoundErrorResponse).data$.error.detail).toBe("This identity does not exist.");
  });

  test("a duplicate externalId is ConflictErrorResponse", async () => {
    const error = await unkey.identities.createIdentity({ externalId: "sdk_user" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictErrorResponse);
    expect((error as ConflictErrorResponse).data$.error.status).toBe(409);
  });

  test("a missing permission is ForbiddenErrorResponse", async () => {
    const limited = sdkClient(h, await h.rootKeyWith(["identity.*.create_identity"]));
    const error = await limited.identities.getIdentity({ identity: "sdk_user" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForbiddenErrorResponse);
    expect((error as ForbiddenErrorResponse).data$.error.detail)
      .toBe("Missing one of these permissions: ['identity.*.read_identity', 'identity.sdk_user.read_identity'], have: ['identity.*.create_identity']");
  });

  // The SDK matches deleteIdentity's errors only as application/problem+json (though it asks for
  // application/json), so tollgate sends that content type there and the SDK raises its typed errors.
  test("deleteIdentity errors surface as the SDK's typed errors", async () => {
    const limited = sdkClient(h, await h.rootKeyWith(["identity.*.read_identity"]));
    const error = await limited.identities.deleteIdentity({ identity: "sdk_user" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForbiddenErrorResponse);
    expect((error as ForbiddenErrorResponse).data$.error.detail).toBe("Missing permission: 'identity.*.delete_identity'");
    const missing = await unkey.identities.deleteIdentity({ identity: "nobody_here" }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundErrorResponse);
  });
});
