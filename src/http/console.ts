/**
 * The web console: `GET /` and every `/console/…` path answer its index.html (the browser routes,
 * so deep links work), `/console/assets/<hashed name>` its scripts and styles, cached for a year
 * since a new build has new names. Every console response carries a CSP without inline script or
 * style; the console talks only to this origin's public v2 API. It answers only under an allowed
 * Host (request-host.ts), 421 otherwise.
 */
import { Elysia, type AnyElysia } from "elysia";
import { CONSOLE_ASSETS_PATH, type ConsoleFile } from "../console/bundle.ts";
import { PROTECTIVE_HEADERS as CONSOLE_HEADERS } from "./protective-headers.ts";
import { requireAllowedHost } from "./request-host.ts";

const IMMUTABLE = "public, max-age=31536000, immutable";

/**
 * `load` gives the bundle; it is called at the first console request and its answer kept (again
 * after a failure). `allowedHosts`: the names besides IP addresses and localhost it answers under.
 */
export function consoleRoutes(load: () => Promise<ConsoleFile[]>, allowedHosts: ReadonlySet<string>): AnyElysia {
  let files: Promise<Map<string, ConsoleFile>> | undefined;
  const bundle = () => {
    files ??= load().then((list) => new Map(list.map((f) => [f.name, f])), (error: unknown) => {
      files = undefined;
      throw error;
    });
    return files;
  };
  const index = async () => {
    const file = (await bundle()).get("index.html");
    if (!file) throw new Error("the console bundle has no index.html");
    return new Response(file.body, { headers: { ...CONSOLE_HEADERS, "content-type": "text/html; charset=utf-8", "cache-control": "no-cache" } });
  };
  const asset = async (name: string) => {
    const file = name === "index.html" ? undefined : (await bundle()).get(name);
    if (!file) return new Response("Not found", { status: 404, headers: { ...CONSOLE_HEADERS, "content-type": "text/plain; charset=utf-8" } });
    return new Response(file.body, { headers: { ...CONSOLE_HEADERS, "content-type": file.contentType, "cache-control": IMMUTABLE } });
  };
  const hide = { detail: { hide: true } };
  return new Elysia()
    .onBeforeHandle(({ request }) => requireAllowedHost(request, allowedHosts))
    .get("/", index, hide)
    .get("/console", index, hide)
    .get(`${CONSOLE_ASSETS_PATH}*`, ({ params }) => asset(params["*"]), hide)
    .get("/console/*", index, hide);
}
