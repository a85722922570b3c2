/**
 * The odd-request shape of the transport campaign: the route's valid body under an odd request
 * line or Host header (none, as HTTP/1.0 and health checks send; empty, spaced, doubled, too
 * long, with a bad port; an absolute URL, a query, a bad escape, doubled or trailing slashes, a
 * long path, another method). What Bun's parser passes on must be answered in the envelope with
 * its request id (the same in `X-Request-Id` and `meta`), never a 5xx, and logged in exactly one
 * access line; what it refuses (marked below, as Bun 1.4 does) gets its bare 4xx/5xx or a closed
 * connection. Either way a refusal stores nothing.
 */
import { pick } from "../support/prng.ts";
import { openExchange } from "../support/raw-http.ts";
import { envelopeProblems, settle } from "./campaign.ts";
import { digest } from "./digest.ts";
import { errorType } from "./transport-judge.ts";
import type { RouteContext, TransportCampaign } from "./transport.ts";

interface Parts {
  host: string;
  path: string;
  /** The caller's Authorization header line, or "". */
  auth: string;
  body: string;
}

/** The request's text from its parts; `bun` when Bun's parser refuses it before the app sees it. */
type Odd = { label: string; text: (p: Parts) => string; bun?: "refuses" };

const post = (target: string, version: string, headers: string, p: Parts) =>
  `POST ${target} ${version}\r\n${headers}${p.auth}content-type: application/json\r\ncontent-length: ${Buffer.byteLength(p.body)}\r\nconnection: close\r\n\r\n${p.body}`;
const withHost = (host: string) => (p: Parts) => post(p.path, "HTTP/1.1", `host: ${host}\r\n`, p);

const ODD: readonly Odd[] = [
  { label: "HTTP/1.0 without Host", text: (p) => post(p.path, "HTTP/1.0", "", p) },
  { label: "HTTP/1.1 without Host", text: (p) => post(p.path, "HTTP/1.1", "", p), bun: "refuses" },
  { label: "an empty Host", text: withHost("") },
  { label: "a Host with a space", text: withHost("a b") },
  { label: "an unclosed IPv6 Host", text: withHost("[::1") },
  { label: "a Host with a path and userinfo", text: withHost("user@evil.example/x") },
  { label: "a Host with a port out of range", text: withHost("example.com:99999") },
  { label: "a 4 KiB Host", text: withHost("h".repeat(4096)) },
  { label: "two Hosts", text: (p) => post(p.path, "HTTP/1.1", `host: ${p.host}\r\nhost: evil.example\r\n`, p) },
  { label: "an absolute-form request line", text: (p) => post(`http://evil.example${p.path}`, "HTTP/1.1", `host: ${p.host}\r\n`, p) },
  { label: "a query string", text: (p) => post(`${p.path}?x=1&y&%zz`, "HTTP/1.1", `host: ${p.host}\r\n`, p) },
  { label: "a bad percent escape", text: (p) => post(`${p.path}%zz`, "HTTP/1.1", `host: ${p.host}\r\n`, p) },
  { label: "a doubled slash", text: (p) => post(`/${p.path}`, "HTTP/1.1", `host: ${p.host}\r\n`, p) },
  { label: "a trailing slash", text: (p) => post(`${p.path}/`, "HTTP/1.1", `host: ${p.host}\r\n`, p) },
  { label: "an 8 KiB path", text: (p) => post(`${p.path}/${"a".repeat(8192)}`, "HTTP/1.1", `host: ${p.host}\r\n`, p) },
  { label: "GET of the operation", text: (p) => `GET ${p.path} HTTP/1.1\r\nhost: ${p.host}\r\n${p.auth}connection: close\r\n\r\n` },
  { label: "a lower-case method", text: (p) => post(p.path, "HTTP/1.1", `host: ${p.host}\r\n`, p).replace(/^POST/, "post"), bun: "refuses" },
  { label: "an unknown method", text: (p) => post(p.path, "HTTP/1.1", `host: ${p.host}\r\n`, p).replace(/^POST/, "BREW"), bun: "refuses" },
  { label: "HTTP/2.0 in the request line", text: (p) => post(p.path, "HTTP/2.0", `host: ${p.host}\r\n`, p), bun: "refuses" },
  { label: "an asterisk target", text: (p) => post("*", "HTTP/1.1", `host: ${p.host}\r\n`, p), bun: "refuses" },
];

/** The access lines (JSON) logged for `requestId`, waiting a little for the line that follows the answer. */
async function accessLines(lines: readonly string[], requestId: string): Promise<number> {
  const count = () => lines.filter((l) => l.includes(requestId) && l.includes('"msg":"request"')).length;
  for (let i = 0; i < 50 && count() === 0; i++) await Bun.sleep(2);
  return count();
}

export async function runOdd(c: TransportCampaign, ctx: RouteContext): Promise<void> {
  const odd = pick(c.next, ODD);
  const caller = pick(c.next, ctx.callers);
  const parts: Parts = {
    host: new URL(c.h.url).host,
    path: ctx.route.path,
    auth: caller.rootKey === null ? "" : `authorization: Bearer ${caller.rootKey}\r\n`,
    body: JSON.stringify(await ctx.route.body(ctx.fixtures)),
  };
  const what = `${ctx.route.path} odd request (${odd.label}) as ${caller.label}`;
  const p = c.summary.problems;
  await settle(c.h);
  const before = digest(c.h);
  const exchange = await openExchange(c.h.url, odd.text(parts));
  const limit = new Promise<"hung">((resolve) => setTimeout(() => resolve("hung"), c.exchangeLimitMs));
  const reply = await Promise.race([exchange.response.catch(() => undefined), limit]);
  c.count(reply === "hung" ? undefined : reply?.status);
  exchange.end();
  if (reply === "hung") return void p.push(`${what}: no answer within ${c.exchangeLimitMs} ms`);
  const requestId = reply?.headers.get("x-request-id");
  if (reply === undefined || !requestId) {
    if (odd.bun !== "refuses") p.push(`${what}: ${reply === undefined ? "closed without an answer" : `${reply.status} without a request id`}, though Bun passes it on`);
    else if (reply !== undefined && (reply.status < 400 || reply.body !== "")) p.push(`${what}: Bun's refusal is ${reply.status} with a body`);
  } else {
    const text = typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body);
    p.push(...envelopeProblems(c.h, what, { status: reply.status, text }));
    if (reply.status >= 500) p.push(`${what}: ${reply.status} ${text.slice(0, 200)}`);
    if (reply.body?.meta?.requestId !== requestId) p.push(`${what}: X-Request-Id ${requestId} is not the envelope's ${reply.body?.meta?.requestId}`);
    if (caller.authError !== undefined && errorType(c.h, { status: reply.status, headers: reply.headers, text }) === caller.authError && reply.headers.get("connection") !== "close") {
      p.push(`${what}: ${reply.status} to a caller without a valid root key, without Connection: close`);
    }
    const logged = c.logLines === undefined ? 1 : await accessLines(c.logLines, requestId);
    if (logged !== 1) p.push(`${what}: ${logged} access lines for ${requestId}, not one`);
  }
  if (reply === undefined || reply.status >= 400) {
    const changed = digest(c.h).changedByRequestsSince(before);
    if (changed.length > 0) p.push(`${what}: refused but changed ${changed.join(", ")}`);
  } else await settle(c.h);
}
