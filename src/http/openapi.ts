/**
 * The API documentation: the OpenAPI document (the v2 operations' entries derived from their
 * declarations, http/operation.ts; Elysia's own routes' from their `detail`) and the Scalar
 * reference UI, both served by tollgate itself. The UI's script is imported as a file, so
 * `bun build --compile` embeds it and the page renders with no internet. The document's `servers`
 * names the origin it was fetched from, so it is added per request. Everything here carries the
 * console's protective headers; the UI's CSP also allows inline styles, which Scalar writes as it
 * renders (its scripts still come only from this origin).
 */
import { Elysia, type AnyElysia } from "elysia";
import type { AddressAllowList } from "../lib/cidr.ts";
import { requestOrigin } from "../lib/request-origin.ts";
import { pathOf } from "./request-host.ts";
import { PROTECTIVE_HEADERS } from "./protective-headers.ts";
import { swagger } from "@elysiajs/swagger";
// The package's exports map does not expose its self-contained browser bundle, hence the path.
import scalarBundlePath from "../../node_modules/@scalar/api-reference/dist/browser/standalone.js" with { type: "file" };
import pkg from "../../package.json";

export const API_DOCS_PATH = "/docs/api";
export const OPENAPI_PATH = `${API_DOCS_PATH}/openapi.json`;
const SCALAR_SCRIPT_PATH = `${API_DOCS_PATH}/assets/scalar-api-reference.js`;

/**
 * Everything the UI would fetch from the internet or link to is turned off: the fonts (system
 * fonts instead), telemetry, the request proxy (requests go to this same origin), the AI agent,
 * "Open in client" (a scalar.com app) and the document download links.
 */
const scalarConfig = {
  spec: { url: OPENAPI_PATH },
  withDefaultFonts: false,
  telemetry: false,
  proxyUrl: "",
  agent: { disabled: true },
  hideClientButton: true,
  documentDownloadType: "none",
  showDeveloperTools: "never",
};

const DESCRIPTION = "Self-hosted API keys: issue, verify and rate-limit. Every operation is `POST /v2/<resource>.<operation>` "
  + "with a JSON body and `Authorization: Bearer <root key>`, except `GET /v2/liveness` and `GET /v2/readiness`, which need no root key. Successes answer `{meta:{requestId}, data}`; "
  + "errors answer `{meta:{requestId}, error:{title, detail, status, type}}`, where `type` links to a page explaining the error.";

/**
 * The UI's script without its fixed links to other sites (their text stays a plain label): the
 * sidebar's "Powered by Scalar" and the like, which no option turns off and which lead nowhere offline.
 */
export const withoutExternalLinks = (script: string) => script.replace(/href:`https?:\/\/[^`$]*`,?/g, "");

/** One per tag the operations use: what the group is for. */
const TAGS = [
  { name: "liveness", description: "Whether the service runs (`/v2/liveness`) and can take traffic (`/v2/readiness`); no root key needed." },
  { name: "apis", description: "APIs: containers of keys, one per product or environment. Deleting one makes its keys verify as `NOT_FOUND`." },
  { name: "keys", description: "The keys you hand to your users: create, verify, update, reroll and delete them, and manage their credits, permissions and roles." },
  { name: "identities", description: "The owners of keys (your users or organisations, by `externalId`): meta and rate limits shared by all their keys." },
  { name: "ratelimits", description: "Rate limiting on any namespace and identifier, independent of keys. Each operation is served at two paths that share the same namespaces and overrides: "
    + "the singular `/v2/ratelimit.*` that the upstream v2 API and its SDK call (with `multiLimit`; `listOverrides` and `listNamespaces`, a tollgate addition, answer a list page with `pagination`), "
    + "and the plural `/v2/ratelimits.*` that the service's own specification names (marked \"plural path\"), kept so clients of either work unchanged. "
    + "Responses are the same except the plural `listOverrides`, which answers `data: {overrides, cursor?}` as the specification shows, and `listNamespaces`, which answers `data: {namespaces, cursor?}` alike; there is no plural `multiLimit`." },
  { name: "permissions", description: "Permissions and roles of the workspace, which keys hold and verifications check with a permission query." },
  { name: "audit", description: "The workspace's audit log: who changed what, when and from where, kept for the retention period." },
  { name: "analytics", description: "Verification and rate-limit analytics queried with SQL: needs the workspace's analytics opt-in and `read_analytics`." },
  { name: "rootKeys", description: "A tollgate addition: what the calling root key is and may do, as the web console reads it. Root keys themselves are made and revoked with the command line (`tollgate root-key`)." },
];

const DOCS_HEADERS: Readonly<Record<string, string>> = {
  ...PROTECTIVE_HEADERS,
  "content-security-policy": PROTECTIVE_HEADERS["content-security-policy"]!.replace("style-src 'self'", "style-src 'self' 'unsafe-inline'"),
};

/** Typed as AnyElysia: the app needs none of these routes' types (see app.ts). */
export const openApiRoutes = (trustedProxies: AddressAllowList, operationPaths: Record<string, unknown>): AnyElysia => {
  // Read on the first request for it, not at every start.
  let script: Promise<string> | undefined;
  return new Elysia()
    // Registered before the plugin so that it wraps the plugin's document route.
    .onAfterHandle(({ request, response, server, set }) => {
      if (response instanceof Response) for (const [name, value] of Object.entries(DOCS_HEADERS)) response.headers.set(name, value);
      else Object.assign(set.headers, DOCS_HEADERS);
      if (pathOf(request.url) !== OPENAPI_PATH || typeof response !== "object" || response === null) return;
      const origin = requestOrigin(request, server?.requestIP(request)?.address, trustedProxies);
      return { ...response, servers: [{ url: origin, description: "This tollgate, as the document was fetched" }] };
    })
    .use(swagger({
      provider: "scalar",
      path: API_DOCS_PATH,
      specPath: OPENAPI_PATH,
      scalarCDN: SCALAR_SCRIPT_PATH,
      // @scalar/types as seen by the plugin predates several of these options; the bundle knows them all.
      scalarConfig: scalarConfig as Record<string, unknown>,
      // Not the default: it drops every path with a dot, which is every /v2/<resource>.<operation>.
      excludeStaticFile: false,
      exclude: [/^\/docs(\/|$)/, "/metrics"],
      documentation: {
        info: { title: "tollgate", version: pkg.version, description: DESCRIPTION },
        // The plugin types `paths` as its own OpenAPI type, which the operations' TypeBox schemas do not match.
        paths: operationPaths as never,
        tags: TAGS,
        components: { securitySchemes: { rootKey: { type: "http", scheme: "bearer", description: "A root key (`tg_root_…`)" } } },
        security: [{ rootKey: [] }],
      },
    }))
    .get(SCALAR_SCRIPT_PATH, async () => new Response(await (script ??= Bun.file(scalarBundlePath).text().then(withoutExternalLinks)), {
      headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=86400" },
    }), { detail: { hide: true } });
};
