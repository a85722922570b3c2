/**
 * `/docs`: one offline HTML page per error type, so every `type` URL the service sends answers;
 * `/docs` itself leads to the API reference, which is what someone typing it looks for. The
 * pages share the console's origin and carry its protective headers; their one inline style is
 * allowed by its hash, so the CSP stays otherwise the console's.
 */
import { createHash } from "node:crypto";
import { Elysia } from "elysia";
import { PROTECTIVE_HEADERS } from "./protective-headers.ts";
import { ERROR_CATALOGUE, errorCodeByTypePath, errorTypePath, type ErrorCode } from "../errors/catalogue.ts";
import { API_DOCS_PATH } from "./openapi.ts";

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const STYLE = "body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem}code{background:#f3f3f3;padding:0 .2em}";

const PAGE_HEADERS: Readonly<Record<string, string>> = {
  ...PROTECTIVE_HEADERS,
  "content-security-policy": PROTECTIVE_HEADERS["content-security-policy"]!.replace("style-src 'self'", `style-src 'sha256-${createHash("sha256").update(STYLE).digest("base64")}'`),
  "content-type": "text/html; charset=utf-8",
};

function page(title: string, body: string): Response {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} · tollgate</title>`
    + `<style>${STYLE}</style></head><body>${body}</body></html>`;
  return new Response(html, { headers: PAGE_HEADERS });
}

/** Catalogue text as HTML: escaped, with `backticks` as code. */
const prose = (text: string) => escapeHtml(text).replace(/`([^`]+)`/g, "<code>$1</code>");

function errorPage(code: ErrorCode): Response {
  const kind = ERROR_CATALOGUE[code];
  return page(kind.urn, `<p><a href="../../../../errors-v2">All errors</a></p><h1><code>${kind.urn}</code></h1>`
    + `<p><strong>HTTP ${kind.status} ${escapeHtml(kind.title)}</strong></p>`
    + `<h2>Cause</h2><p>${prose(kind.cause)}</p><h2>What to do</h2><p>${prose(kind.remedy)}</p>`
    + `<p>Every error body is <code>{meta:{requestId}, error:{title, detail, status, type}}</code>; a 400 adds <code>errors[]</code> with each field's problem. Quote <code>meta.requestId</code> when asking for help.</p>`);
}

function indexPage(): Response {
  const rows = (Object.keys(ERROR_CATALOGUE) as ErrorCode[]).map((code) => {
    const kind = ERROR_CATALOGUE[code];
    return `<li><a href="errors-v2/${errorTypePath(code)}"><code>${kind.urn}</code></a> (${kind.status})</li>`;
  });
  return page("Errors", `<h1>Error types</h1><ul>${rows.join("")}</ul>`);
}

export const docsRoutes = () =>
  new Elysia()
    .get("/docs", () => new Response(null, { status: 302, headers: { ...PROTECTIVE_HEADERS, location: API_DOCS_PATH } }))
    .get("/docs/api-reference/errors-v2", () => indexPage())
    .get("/docs/api-reference/errors-v2/*", ({ params, set }) => {
      const code = errorCodeByTypePath(params["*"]);
      if (!code) {
        set.status = 404;
        return page("Unknown error type", "<h1>Unknown error type</h1><p>See <a href=\"/docs/api-reference/errors-v2\">all errors</a>.</p>");
      }
      return errorPage(code);
    });
