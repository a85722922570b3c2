import { describe, expect, test } from "bun:test";
import { routeContract } from "../../../support/route-contract.ts";
import { expectInvalid, otherWorkspaceRootKey } from "../../../support/contract.ts";
import { describeListing, listedIds as ids } from "./listing.ts";
import { createRole } from "./support.ts";

const h = routeContract("/v2/permissions.listRoles");
const list = h.call;

describeListing(h, { noun: "roles", create: (h, name, key) => createRole(h, name, [], key), grant: "rbac.*.read_role" });

describe("200", () => {
  test("each role includes its permissions; one without any leaves the field out", async () => {
    const key = await otherWorkspaceRootKey(h, "shapes");
    const admin = await createRole(h, "admin", ["all.read", "all.write"], key);
    const empty = await createRole(h, "nobody", [], key);
    const res = await list({}, key);
    const byId = new Map(res.body.data.map((r: { id: string }) => [r.id, r]));
    expect(byId.get(empty)).toEqual({ id: empty, name: "nobody" });
    const perm = async (slug: string) => (await h.post("/v2/permissions.getPermission", { permission: slug }, { key })).body.data;
    const read = await perm("all.read");
    const perms = [read, await perm("all.write")].sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(read).toEqual({ id: expect.stringMatching(/^perm_/), name: "all.read", slug: "all.read", description: "Auto-created permission: all.read" });
    expect(byId.get(admin)).toEqual({ id: admin, name: "admin", permissions: perms });
  });

  test("search: case-insensitive substring of name or description", async () => {
    const key = await otherWorkspaceRootKey(h, "search");
    const named = await createRole(h, "Support.Agent", [], key);
    const described = (await h.post("/v2/permissions.createRole", { name: "helpdesk", description: "first-line SUPPORT" }, { key })).body.data.roleId;
    await createRole(h, "billing", [], key);
    expect(ids(await list({ search: "support" }, key)).sort()).toEqual([named, described].sort());
  });
});

describe("400", () => {
  test("unknown field", async () => {
    expectInvalid(h, await list({ name: "x" }), "body.name");
  });
});
