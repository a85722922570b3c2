/**
 * routeContract(): what every route test file starts from (the real app through startHarness, an
 * API, the file's setup records, a poster for the route under test) and the outcomes every route
 * shares: 403 naming the missing grant, 404 for another workspace's record. It is itself a Harness
 * (testServer()) that forwards to the server of the running test, so it can be named at a file's
 * top level and the support helpers that take a Harness take it as it is.
 * One server per file unless `perTest`: each test makes its own records (a key, a workspace), so
 * none sees another's, and a boot per test would make the route tests several times slower; a
 * file whose tests need an instance of their own (counting every entry there is) asks for one.
 */
import { afterAll, afterEach, beforeAll, beforeEach } from "bun:test";
import { allGrantsExcept, expectError, expectMissingOneOf, INSUFFICIENT, otherWorkspaceRootKey, createApi } from "./contract.ts";
import { startHarness, type ApiResponse, type Harness } from "./harness.ts";

export interface RouteContractOptions<F> extends Omit<ServerOptions, "onStart"> {
  /** Name of an API created (with the bootstrap key) before the tests; its id is `apiId`. */
  api?: string;
  /** Records the tests read but never change, made once the server (and the API) is up; what it returns is `fixture`. */
  setup?: (h: Harness) => Promise<F>;
}

export interface RouteContract<F = unknown> extends Harness {
  /** The id of the API named by the `api` option. */
  readonly apiId: string;
  /** What `setup` returned. */
  readonly fixture: F;
  /** POSTs `body` to the route under test with the bootstrap root key, or `key`. */
  call(body: unknown, key?: string): Promise<ApiResponse>;
  /**
   * Calls the route with a root key holding every grant but the wildcard `grant` and asserts a 403
   * whose detail names it; with `on` (an API or namespace id), also the grant narrowed to it.
   */
  expectDeniedWithout(grant: string, body: unknown, on?: string): Promise<ApiResponse>;
  /** Calls the route with a full root key of a new workspace and asserts the 404 `typePath` (and `detail`). */
  expectHiddenFromOtherWorkspace(body: unknown, typePath: string, detail?: string): Promise<ApiResponse>;
}

/** The 403 detail that names the one grant a caller lacks (a choice of grants: expectMissingOneOf). */
export function missingPermission(grant: string): string {
  return `Missing permission: '${grant}'`;
}

export interface ServerOptions {
  /** A fresh server for every test instead of one for the file. */
  perTest?: boolean;
  env?: Record<string, string>;
  /** Runs once each server is up, before the tests that use it. */
  onStart?: (h: Harness) => Promise<void>;
}

/**
 * Registers the hooks that start and stop a server for the calling test file (or each of its tests)
 * and returns a Harness that forwards to it, usable from the file's top level.
 */
export function testServer(opts: ServerOptions = {}): Harness {
  let server: Harness | undefined;
  const live = (): Harness => {
    if (server === undefined) throw new Error("no server: used outside a test");
    return server;
  };
  const start = async () => {
    server = await startHarness(opts.env === undefined ? {} : { env: opts.env });
    await opts.onStart?.(server);
  };
  const stop = async () => {
    await server?.stop();
    server = undefined;
  };
  if (opts.perTest) {
    beforeEach(start);
    afterEach(stop);
  } else {
    beforeAll(start);
    afterAll(stop);
  }
  return {
    get url() { return live().url; },
    get rootKey() { return live().rootKey; },
    get clock() { return live().clock; },
    get dataDir() { return live().dataDir; },
    get running() { return live().running; },
    get embedded() { return live().embedded; },
    get records() { return live().records; },
    post: (p, body, o) => live().post(p, body, o),
    rootKeyWith: (permissions, workspace) => live().rootKeyWith(permissions, workspace),
    restart: () => live().restart(),
    stop: () => live().stop(),
  };
}

/** Registers the server's hooks for the calling test file and returns the contract for `path`. */
export function routeContract<F = undefined>(path: string, opts: RouteContractOptions<F> = {}): RouteContract<F> {
  let made: { apiId?: string; fixture?: F } = {};
  let otherWorkspaces = 0;
  const h = testServer({
    ...opts,
    onStart: async (started) => {
      made = opts.api === undefined ? {} : { apiId: await createApi(started, opts.api) };
      if (opts.setup) made.fixture = await opts.setup(started);
    },
  });
  const call = (body: unknown, key?: string) => h.post(path, body, key === undefined ? {} : { key });

  // Inherits the forwarding getters: copying them would read a server that is not up yet.
  return Object.defineProperties(Object.create(h) as RouteContract<F>, Object.getOwnPropertyDescriptors({
    get apiId(): string {
      if (made.apiId === undefined) throw new Error(`no API for ${path}: pass the api option`);
      return made.apiId;
    },
    get fixture(): F {
      if (!("fixture" in made)) throw new Error(`no fixture for ${path}: pass the setup option`);
      return made.fixture as F;
    },
    call,
    async expectDeniedWithout(grant: string, body: unknown, on?: string) {
      const held = allGrantsExcept(grant);
      const res = await call(body, await h.rootKeyWith(held));
      if (on === undefined) expectError(h, res, 403, INSUFFICIENT, missingPermission(grant));
      else expectMissingOneOf(h, res, [grant, grant.replace("*", on)], held);
      return res;
    },
    async expectHiddenFromOtherWorkspace(body: unknown, typePath: string, detail?: string) {
      otherWorkspaces += 1;
      const res = await call(body, await otherWorkspaceRootKey(h, `elsewhere-${otherWorkspaces}`));
      expectError(h, res, 404, typePath, detail);
      return res;
    },
  }));
}
