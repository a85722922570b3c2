import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import {
  allGrantsExcept, createApi, createKey, expectError, expectInvalid, expectMissingOneOf, otherWorkspaceRootKey, ROOT_KEY_NOT_FOUND,
} from "../../../support/contract.ts";
import { createIdentity, IDENTITY_NOT_FOUND, NOT_FOUND_DETAIL, RATELIMIT_ID, REQUEST_ID } from "./support.ts";

const PATH = "/v2/identities.getIdentity";
const h = routeContract(PATH);

describe("200", () => {
  test("by externalId and by id: the same Identity {id, externalId, meta, ratelimits}", async () => {
    const id = await createIdentity(h, "user_get", { meta: { plan: "pro" }, ratelimits: [{ name: "requests", limit: 10, duration: 1000, autoApply: true }] });
    const expected = {
      id, externalId: "user_get", meta: { plan: "pro" },
      ratelimits: [{ id: RATELIMIT_ID, name: "requests", limit: 10, duration: 1000, autoApply: true }],
    };
    const byExternal = await h.post(PATH, { identity: "user_get" });
    expect(byExternal.status).toBe(200);
    expect(byExternal.body).toEqual({ meta: { requestId: REQUEST_ID }, data: expected });
    expect((await h.post(PATH, { identity: id })).body.data).toEqual(byExternal.body.data);
  });

  test("an identity created by keys.createKey's externalId is readable, with meta {} and no limits", async () => {
    const apiId = await createApi(h, "linked");
    await createKey(h, { apiId, externalId: "user_from_key" });
    const second = await createKey(h, { apiId, externalId: "user_from_key" });
    const res = await h.post(PATH, { identity: "user_from_key" });
    expect(res.body.data).toEqual({ id: expect.stringMatching(/^id_/), externalId: "user_from_key", meta: {}, ratelimits: [] });
    const key = await h.post("/v2/keys.getKey", { keyId: second.keyId });
    expect(key.body.data.identity).toEqual({ id: res.body.data.id, externalId: "user_from_key" });
  });

  test("`identity.<id>.read_identity` is enough for that identity, by id or externalId", async () => {
    const id = await createIdentity(h, "user_scoped");
    const key = await h.rootKeyWith([`identity.${id}.read_identity`]);
    expect((await h.post(PATH, { identity: id }, { key })).body.data.id).toBe(id);
    expect((await h.post(PATH, { identity: "user_scoped" }, { key })).body.data.id).toBe(id);
  });
});

describe("400", () => {
  test("identity missing or empty", async () => {
    expectInvalid(h, await h.post(PATH, {}), "body.identity");
    expectInvalid(h, await h.post(PATH, { identity: "" }), "body.identity");
  });

  test("unknown field is named", async () => {
    expectInvalid(h, await h.post(PATH, { identity: "x", externalId: "x" }), "body.externalId");
  });
});

describe("401", () => {
  test("unknown root key", async () => {
    expectError(h, await h.post(PATH, { identity: "x" }, { key: "tg_root_unknown" }), 401, ROOT_KEY_NOT_FOUND);
  });
});

describe("403", () => {
  const oneOf = (identity: string) => ["identity.*.read_identity", `identity.${identity}.read_identity`];

  test("403: Missing one of these permissions: [...], have: [...] without read_identity (upstream v2_identities_get_identity 403_test 'no permission to read any identity')", async () => {
    await createIdentity(h, "user_hidden");
    const held = allGrantsExcept("identity.*.read_identity");
    const res = await h.post(PATH, { identity: "user_hidden" }, { key: await h.rootKeyWith(held) });
    expectMissingOneOf(h, res, oneOf("user_hidden"), held);
  });

  test("403: a grant for another identity names the identity as asked for, never the resolved id (upstream v2_identities_get_identity 403_test 'permission by external ID but not by ID')", async () => {
    const mine = await createIdentity(h, "user_mine");
    const theirs = await createIdentity(h, "user_theirs");
    const key = await h.rootKeyWith([`identity.${mine}.read_identity`]);
    const res = await h.post(PATH, { identity: "user_theirs" }, { key });
    expectMissingOneOf(h, res, oneOf("user_theirs"), [`identity.${mine}.read_identity`]);
    expect(res.body.error.detail).not.toContain(theirs);
  });

  test("without the wildcard grant, a missing identity is 403 as well, worded alike (existence does not leak)", async () => {
    const mine = await createIdentity(h, "user_only");
    const key = await h.rootKeyWith([`identity.${mine}.read_identity`]);
    expectMissingOneOf(h, await h.post(PATH, { identity: "user_nonexistent" }, { key }), oneOf("user_nonexistent"), [`identity.${mine}.read_identity`]);
  });
});

describe("404", () => {
  test("unknown identity", async () => {
    expectError(h, await h.post(PATH, { identity: "user_unknown" }), 404, IDENTITY_NOT_FOUND, NOT_FOUND_DETAIL);
    expectError(h, await h.post(PATH, { identity: "id_unknown" }), 404, IDENTITY_NOT_FOUND, NOT_FOUND_DETAIL);
  });

  test("deleted identity, by id and by externalId", async () => {
    const id = await createIdentity(h, "user_deleted");
    expect((await h.post("/v2/identities.deleteIdentity", { identity: id })).status).toBe(200);
    expectError(h, await h.post(PATH, { identity: id }), 404, IDENTITY_NOT_FOUND, NOT_FOUND_DETAIL);
    expectError(h, await h.post(PATH, { identity: "user_deleted" }), 404, IDENTITY_NOT_FOUND, NOT_FOUND_DETAIL);
  });

  test("an identity of another workspace, by id and by externalId", async () => {
    const id = await createIdentity(h, "user_elsewhere");
    const other = await otherWorkspaceRootKey(h, "ws-get-other");
    expectError(h, await h.post(PATH, { identity: id }, { key: other }), 404, IDENTITY_NOT_FOUND, NOT_FOUND_DETAIL);
    expectError(h, await h.post(PATH, { identity: "user_elsewhere" }, { key: other }), 404, IDENTITY_NOT_FOUND, NOT_FOUND_DETAIL);
  });
});
