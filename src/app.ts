/**
 * createApp(services): the Elysia app. It never listens and never reads the environment; boot.ts
 * does both. Every v2 operation is served by the one pipeline (http/pipeline.ts) from Bun's router;
 * Elysia serves the rest (liveness, readiness, /metrics, the docs and the API document) and answers
 * 404/405 for anything unmatched, with the same error renderer, envelope and access log.
 */
import { Elysia, t, type AnyElysia } from "elysia";
import pkg from "../package.json";
import { DEFAULT_HTTP_BOUNDS, type HttpBounds } from "./config.ts";
import { AddressAllowList, type AddressRange } from "./lib/cidr.ts";
import { BUILD_COMMIT } from "./lib/build-info.ts";
import { clientAddress } from "./lib/client-address.ts";
import type { Logger } from "./lib/logger.ts";
import type { DependencyHealth } from "./lib/dependency-health.ts";
import { AppError } from "./errors/app-error.ts";
import type { Services } from "./services/index.ts";
import { accessLog, requestLogger } from "./http/access-log.ts";
import { BodyReader } from "./http/body-reader.ts";
import { docsRoutes } from "./http/docs.ts";
import { consoleRoutes } from "./http/console.ts";
import { loadConsole, type ConsoleFile } from "./console/bundle.ts";
import { Ok } from "./http/envelope.ts";
import { createErrorRenderer, type UnreachableStore } from "./http/errors.ts";
import { jsonResponse } from "./http/json.ts";
import { MetricsRegistry, metricsRoute, type MetricsSources } from "./http/metrics.ts";
import { openApiRoutes } from "./http/openapi.ts";
import { documented } from "./http/responses.ts";
import { RequestContexts, type RequestInfo } from "./http/request-context.ts";
import type { RouteDeps } from "./routes/deps.ts";
import { v2Operations } from "./routes/v2/index.ts";
import { Pipeline, type Server } from "./http/pipeline.ts";
import { InFlight } from "./http/in-flight.ts";
import { v1Routes } from "./http/v1.ts";
import { v1Operations } from "./routes/v1/index.ts";
import { documentedPaths } from "./http/operation.ts";

export interface AppOptions {
  services: Services;
  logger: Logger;
  /** Base of error `type` URLs, resolved lazily because the port may only be known after listen. */
  docsUrl: () => string;
  /** Client addresses that may read GET /metrics (default: loopback only). */
  metricsAllow?: readonly AddressRange[];
  /** The databases' sizes for /metrics (boot.ts); none on a cluster node, whose /metrics then has no such line. */
  databaseSizeBytes?: () => number;
  analyticsDatabaseSizeBytes?: () => number;
  /** Proxies whose X-Forwarded-For is believed for the audit log's remote IP and the in-flight shares' address (default: none). */
  trustedProxies?: readonly AddressRange[];
  /** Host names besides IP addresses and localhost under which /metrics and the console answer (default: none). */
  allowedHosts?: readonly string[];
  /**
   * Why the service is not ready (GET /v2/readiness), one reason per failed check; boot.ts checks
   * both databases, boot-cluster.ts PostgreSQL and Redis (each bounded in time).
   */
  readiness?: () => string[] | Promise<string[]>;
  /** Which server an error says is unreachable, for `service_unavailable` (a cluster node's PostgreSQL and Redis). */
  unreachableStore?: UnreachableStore;
  /** A cluster node's shared servers, told of each request answered service_unavailable for one; in /metrics. */
  dependencies?: DependencyHealth;
  /** A cluster node's credit-spend statements given up on, for /metrics. */
  creditSettlement?: MetricsSources["creditSettlement"];
  /** Bounds of each request (default DEFAULT_HTTP_BOUNDS); boot.ts applies the connection's own. */
  httpBounds?: HttpBounds;
  /** Serve v1's two hot paths (`TOLLGATE_V1_PATHS=on`, routes/v1); default off: they answer 404 as any unknown path. */
  v1Paths?: boolean;
  /** The web console's files (default: the embedded bundle, else bundled from src/console at the first request). */
  consoleFiles?: () => Promise<ConsoleFile[]>;
}

const MessageData = (description: string) => t.Object({ message: t.String({ description }) });

const LIVENESS_DOC = {
  summary: "Liveness", tags: ["liveness"], description: "Answers 200 while the service runs; needs no root key.", security: [],
  ...documented({ data: MessageData("`we're cooking`"), rootKey: false, errors: ["unexpected_error"] }),
};

const READINESS_DOC = {
  summary: "Readiness", tags: ["liveness"], security: [],
  description: "Answers 200 when the service can take traffic: tollgate.db and analytics.db are writable (file, directory and write lock) "
    + "and their migrations are those of this version; on a cluster node, which has neither, PostgreSQL holds no migrations newer than this version's "
    + "(an outage of PostgreSQL or Redis, which every node shares, leaves the node ready: what needs the server answers `service_unavailable` per request). "
    + "Otherwise 503 `not_ready`, whose detail names each failed check. Needs no root key; "
    + "cheap enough to poll every second (it writes nothing), and answered within about a second even when a server hangs.",
  ...documented({ data: MessageData("`ready`"), rootKey: false, errors: ["not_ready", "unexpected_error"] }),
};

const LOOPBACK: readonly AddressRange[] = [{ address: "127.0.0.0", prefix: 8, family: "ipv4" }, { address: "::1", prefix: 128, family: "ipv6" }];

export function createApp(opts: AppOptions) {
  const contexts = new RequestContexts();
  const bounds = opts.httpBounds ?? DEFAULT_HTTP_BOUNDS;
  const metrics = new MetricsRegistry();
  const metricsSources = {
    keyCache: () => opts.services.keyCache,
    ...(opts.services.limiter ? { ratelimitWindows: opts.services.limiter.stats.bind(opts.services.limiter) } : {}),
    ratelimitNamespaces: () => opts.services.ratelimits.namespaceCacheStats(),
    ...(opts.databaseSizeBytes ? { databaseSizeBytes: opts.databaseSizeBytes } : {}),
    ...(opts.analyticsDatabaseSizeBytes ? { analyticsDatabaseSizeBytes: opts.analyticsDatabaseSizeBytes } : {}),
    requestsInFlight: () => Math.max(0, (app.server?.pendingRequests ?? 1) - 1),
    operationsInFlight: () => {
      const { total, unauthenticated } = inFlight.counts();
      return { authenticated: total - unauthenticated, unauthenticated };
    },
    verificationsByApi: () => opts.services.verification.countsByApi.series(),
    build: { version: pkg.version, commit: BUILD_COMMIT },
    ...(opts.dependencies ? { dependencies: opts.dependencies.states.bind(opts.dependencies) } : {}),
    ...(opts.creditSettlement ? { creditSettlement: opts.creditSettlement } : {}),
  };
  const trustedProxies = new AddressAllowList(opts.trustedProxies ?? []);
  const allowedHosts = new Set(opts.allowedHosts ?? []);
  const addressOf = (request: Request, server: Server | null | undefined) => clientAddress(server?.requestIP(request)?.address, request.headers.get("x-forwarded-for"), trustedProxies);
  const authenticate = (request: Request, info: RequestInfo) => opts.services.auth.authenticate(request.headers.get("authorization"), () => ({
    // `app` is assigned below, long before a request arrives.
    remoteIp: addressOf(request, app.server),
    userAgent: request.headers.get("user-agent") ?? undefined,
  }), info.preparedRootKey);
  const prepare = (request: Request, info: RequestInfo): Promise<void> | undefined => {
    const preparing = opts.services.auth.prepare(request.headers.get("authorization"));
    return preparing?.then((prepared) => {
      info.preparedRootKey = prepared;
    });
  };
  const bodies = new BodyReader({ timeoutMs: bounds.bodyTimeoutMs, bufferBudgetBytes: bounds.bodyBufferBytes });
  const inFlight = new InFlight<Server>({
    max: bounds.maxRequestsInFlight, unauthenticatedPercent: bounds.unauthenticatedInFlightPercent, perAddressPercent: bounds.perAddressInFlightPercent,
  }, addressOf);
  // Learnt once every route is registered (below).
  const methodsByPath = new Map<string, string[]>();
  const errors = createErrorRenderer(opts.docsUrl, opts.logger, (request) => bodies.leftUnread(request), (path) => methodsByPath.get(path), opts.unreachableStore,
    (away) => opts.dependencies?.failed(away.store, "closed", away.code));
  const deps: RouteDeps = {
    services: opts.services,
    principal: (request, info) => (info.principal ??= authenticate(request, info)),
  };
  const logOptions = { logger: opts.logger, contexts, metrics, errorCodeOf: errors.codeOf };
  // The pipeline authenticates every request from its header before its body: the route gets that principal.
  const pipelineParts = { errors, metrics, log: requestLogger(logOptions), bodies, inFlight, prepare, authenticate };
  const pipeline = new Pipeline(pipelineParts);
  const operations = v2Operations(deps);
  const v1 = opts.v1Paths === true ? v1Operations(deps) : [];

  // Typed as AnyElysia: nothing needs these routes' types, and adding them to the app's pushes tsc past its depth limit.
  const service: AnyElysia = new Elysia()
    .use(metricsRoute(metrics, opts.metricsAllow ?? LOOPBACK, metricsSources, allowedHosts))
    .use(docsRoutes())
    .use(consoleRoutes(opts.consoleFiles ?? loadConsole, allowedHosts));

  // Bun's router answers the operations' POSTs through the pipeline; everything else reaches Elysia.
  const app = new Elysia({ normalize: false, serve: { routes: { ...pipeline.routes(operations), ...v1Routes(pipelineParts, v1) } } })
    .onRequest(({ request }) => {
      contexts.of(request);
    })
    .onError(({ error, code, request, set }) => {
      const response = errors.render(error, code, request, contexts.of(request).requestId);
      // The access log reads the status from `set`; a returned Response does not update it.
      set.status = response.status;
      return response;
    })
    .mapResponse(({ responseValue, request, set }) => {
      if (!(responseValue instanceof Ok)) return;
      const { requestId } = contexts.of(request);
      return jsonResponse({ meta: { requestId }, data: responseValue.data, ...responseValue.extra }, Number(set.status ?? 200), requestId);
    })
    .use(accessLog(logOptions))
    .get("/v2/liveness", () => new Ok({ message: "we're cooking" }), { detail: LIVENESS_DOC })
    .get("/v2/readiness", async () => {
      const failures = (await opts.readiness?.()) ?? [];
      if (failures.length > 0) throw new AppError("not_ready", { detail: failures.join(" ") });
      return new Ok({ message: "ready" });
    }, { detail: READINESS_DOC })
    .use(service)
    .use(openApiRoutes(trustedProxies, documentedPaths(operations)));
  learnMethods([...app.routes, ...[...operations, ...v1].map(({ path }) => ({ method: "POST", path }))], methodsByPath);
  return app;
}

/**
 * The methods of each fixed path, for the 405s' `Allow`. /metrics is left out: to a client outside
 * its allow-list it must look like no route at all.
 */
function learnMethods(routes: ReadonlyArray<{ method: string; path: string }>, into: Map<string, string[]>): void {
  for (const { method, path } of routes) {
    if (path === "/metrics" || /[*:]/.test(path)) continue;
    const methods = into.get(path) ?? [];
    // Bun answers HEAD of every GET route.
    for (const m of method === "GET" ? ["GET", "HEAD"] : [method]) if (!methods.includes(m)) methods.push(m);
    into.set(path, methods);
  }
}

export type App = ReturnType<typeof createApp>;
