/**
 * The API documentation: the OpenAPI document of every route (from the routes' `t` schemas and
 * `detail`) and the Scalar reference UI, both served by tollgate itself. The UI's script is
 * imported as a file, so `bun build --compile` embeds it and the page renders with no internet.
 */
import { Elysia, type AnyElysia } from "elysia";
import { swagger } from "@elysiajs/swagger";
// The package's exports map does not expose its self-contained browser bundle, hence the path.
import scalarBundlePath from "../../node_modules/@scalar/api-reference/dist/browser/standalone.js" with { type: "file" };
import pkg from "../../package.json";

export const API_DOCS_PATH = "/docs/api";
export const OPENAPI_PATH = `${API_DOCS_PATH}/openapi.json`;
const SCALAR_SCRIPT_PATH = `${API_DOCS_PATH}/assets/scalar-api-reference.js`;

/**
 * Everything the UI would fetch from the internet is turned off: the fonts (system fonts instead),
 * telemetry, the request proxy (requests go to this same origin) and the AI agent.
 */
const scalarConfig = {
  spec: { url: OPENAPI_PATH },
  withDefaultFonts: false,
  telemetry: false,
  proxyUrl: "",
  agent: { disabled: true },
  hideClientButton: true,
  showDeveloperTools: "never",
};

const DESCRIPTION = "Self-hosted API keys: issue, verify and rate-limit. Every operation is `POST /v2/<resource>.<operation>` "
  + "with a JSON body and `Authorization: Bearer <root key>`, except `GET /v2/liveness` and `GET /v2/readiness`, which need no root key. Successes answer `{meta:{requestId}, data}`; "
  + "errors answer `{meta:{requestId}, error:{title, detail, status, type}}`, where `type` links to a page explaining the error.";

/** Typed as AnyElysia: the app needs none of these routes' types (see app.ts). */
export const openApiRoutes = (): AnyElysia =>
  new Elysia()
    .use(swagger({
      provider: "scalar",
      path: API_DOCS_PATH,
      specPath: OPENAPI_PATH,
      scalarCDN: SCALAR_SCRIPT_PATH,
      // @scalar/types as seen by the plugin predates several of these options; the bundle knows them all.
      scalarConfig: scalarConfig as Record<string, unknown>,
      // Not the default: it drops every path with a dot, which is every /v2/<resource>.<operation>.
      excludeStaticFile: false,
      exclude: [/^\/docs\//, "/metrics"],
      documentation: {
        info: { title: "tollgate", version: pkg.version, description: DESCRIPTION },
        components: { securitySchemes: { rootKey: { type: "http", scheme: "bearer", description: "A root key (`tg_root_…`)" } } },
        security: [{ rootKey: [] }],
      },
    }))
    .get(SCALAR_SCRIPT_PATH, () => new Response(Bun.file(scalarBundlePath), {
      headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=86400" },
    }), { detail: { hide: true } });
