/**
 * createApp(services): the Elysia app. It never listens and never reads the environment; boot.ts
 * does both. Cross-cutting concerns live here in order: request id → body parsing (1 MiB, JSON) →
 * validation → route (which authenticates) → envelope; one onError renders every failure.
 */
import { Elysia } from "elysia";
import type { Logger } from "./lib/logger.ts";
import type { Services } from "./services/index.ts";
import { parseJsonBody } from "./http/body.ts";
import { docsRoutes } from "./http/docs.ts";
import { Ok } from "./http/envelope.ts";
import { createErrorRenderer } from "./http/errors.ts";
import { jsonResponse } from "./http/json.ts";
import { RequestContexts } from "./http/request-context.ts";
import type { RouteDeps } from "./routes/deps.ts";
import { v2Routes } from "./routes/v2/index.ts";

export interface AppOptions {
  services: Services;
  logger: Logger;
  /** Base of error `type` URLs, resolved lazily because the port may only be known after listen. */
  docsUrl: () => string;
}

export function createApp(opts: AppOptions) {
  const contexts = new RequestContexts();
  const errors = createErrorRenderer(opts.docsUrl, opts.logger);
  const deps: RouteDeps = {
    services: opts.services,
    principal: (request) => opts.services.auth.authenticate(request.headers.get("authorization"), {
      remoteIp: request.headers.get("x-forwarded-for")?.split(",")[0]?.trim() || undefined,
      userAgent: request.headers.get("user-agent") ?? undefined,
    }),
  };

  return new Elysia({ normalize: false })
    .onRequest(({ request }) => {
      contexts.of(request);
    })
    // Every body is read as JSON whatever its content type, so a missing header is not a 500.
    .onParse(({ request }) => parseJsonBody(request))
    .onError(({ error, code, request }) => errors.render(error, code, request, contexts.of(request).requestId))
    .mapResponse(({ responseValue, request, set }) => {
      if (!(responseValue instanceof Ok)) return;
      const { requestId } = contexts.of(request);
      return jsonResponse({ meta: { requestId }, data: responseValue.data, ...responseValue.extra }, Number(set.status ?? 200), requestId);
    })
    .get("/v2/liveness", () => new Ok({ message: "we're cooking" }))
    .use(docsRoutes())
    .use(v2Routes(deps));
}

export type App = ReturnType<typeof createApp>;
