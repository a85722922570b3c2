/**
 * The CLI's workspace choice and principal (src/cli/scope.ts), over a stand-in for the workspace and
 * API services: the cases a data dir made by tollgate itself cannot reach (it always has `default`).
 */
import { describe, expect, test } from "bun:test";
import { chosenApi, chosenWorkspace, cliPrincipal } from "../../src/cli/scope.ts";
import { UsageError } from "../../src/cli/io.ts";
import { AppError } from "../../src/errors/app-error.ts";
import { ALL_GRANTS, can } from "../../src/services/auth/index.ts";
import type { Services } from "../../src/services/index.ts";

type Ws = { id: string; name: string };

function servicesWith(workspaces: Ws[], apis: Ws[] = []): Services {
  const find = (idOrName: string) => workspaces.find((w) => w.id === idOrName || w.name.toLowerCase() === idOrName.toLowerCase());
  return {
    workspaces: {
      list: () => workspaces,
      findByIdOrName: find,
      get: (idOrName: string) => {
        const ws = find(idOrName);
        if (!ws) throw new AppError("workspace_not_found", { detail: `No workspace has the id or name '${idOrName}'.` });
        return ws;
      },
    },
    apis: { listApis: () => ({ items: apis, cursor: undefined }) },
  } as unknown as Services;
}

const ACTOR = { type: "cli", id: "cli", name: "tollgate CLI" } as const;

describe("chosenWorkspace", () => {
  test("--workspace by id or name wins; an unknown one is a failure that names it", async () => {
    const services = servicesWith([{ id: "ws_1", name: "default" }, { id: "ws_2", name: "acme" }]);
    expect((await chosenWorkspace(services, "ACME")).id).toBe("ws_2");
    expect((await chosenWorkspace(services, "ws_1")).name).toBe("default");
    await expect(chosenWorkspace(services, "nope")).rejects.toThrow("'nope'");
  });

  test("without --workspace: 'default' when it exists, else the only workspace", async () => {
    expect((await chosenWorkspace(servicesWith([{ id: "ws_2", name: "acme" }, { id: "ws_1", name: "default" }]), undefined)).id).toBe("ws_1");
    expect((await chosenWorkspace(servicesWith([{ id: "ws_2", name: "acme" }]), undefined)).id).toBe("ws_2");
  });

  test("without --workspace, no 'default' and several workspaces: a usage error listing them", async () => {
    const run = () => chosenWorkspace(servicesWith([{ id: "ws_2", name: "acme" }, { id: "ws_3", name: "beta" }]), undefined);
    await expect(run()).rejects.toThrow(UsageError);
    await expect(run()).rejects.toThrow("--workspace <id|name> is needed");
    await expect(run()).rejects.toThrow("acme, beta");
  });
});

describe("cliPrincipal", () => {
  test("holds every permission, confined to its workspace, with the CLI as actor", () => {
    const principal = cliPrincipal("ws_1", ACTOR);
    expect(principal.workspaceId).toBe("ws_1");
    expect(principal.actor).toEqual(ACTOR);
    for (const grant of ALL_GRANTS) {
      const [resource, , action] = grant.split(".");
      expect(can(principal, resource!, "anything", action!)).toBe(true);
    }
  });
});

describe("chosenApi", () => {
  const services = servicesWith([], [{ id: "api_1", name: "shop" }, { id: "api_2", name: "twin" }, { id: "api_3", name: "twin" }]);
  const principal = cliPrincipal("ws_1", ACTOR);

  test("by id, else by name", async () => {
    expect((await chosenApi(services, principal, "api_2")).name).toBe("twin");
    expect((await chosenApi(services, principal, "shop")).id).toBe("api_1");
  });

  test("an unknown API is not found, naming it; a name two APIs share asks for the id", async () => {
    await expect(chosenApi(services, principal, "nope")).rejects.toThrow("'nope'");
    await expect(chosenApi(services, principal, "twin")).rejects.toThrow("api_2, api_3");
  });
});
