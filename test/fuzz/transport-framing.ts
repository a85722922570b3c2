/**
 * The malformed-framing shape of the transport campaign: requests whose length is ambiguous or
 * unreadable (Content-Length beside Transfer-Encoding, two Content-Lengths, a transfer coding
 * other than chunked, chunk sizes that are not hex or overflow, lengths that are negative or
 * overflow). Bun's HTTP parser refuses them with a bare 400 before the app sees them, so no
 * envelope can be asked of the answer; what is asked: a 400 (in the envelope if it has a body),
 * the connection closed, and nothing stored, not even by the request smuggled in behind it.
 */
import type { Harness } from "../support/harness.ts";
import { pick } from "../support/prng.ts";
import { openExchange } from "../support/raw-http.ts";
import { envelopeProblems, settle } from "./campaign.ts";
import { digest } from "./digest.ts";
import type { Caller } from "./transport-judge.ts";
import type { RouteContext, TransportCampaign } from "./transport.ts";

/** The request's framing headers and body, for a valid body `body` of `n` bytes. */
type Malformed = [label: string, frame: (body: string, n: number) => { headers: string; rest: string }];

const chunked = (body: string, n: number, size = n.toString(16)) => `${size}\r\n${body}\r\n0\r\n\r\n`;

const MALFORMED: readonly Malformed[] = [
  ["Content-Length beside chunked", (b, n) => ({ headers: `content-length: ${n}\r\ntransfer-encoding: chunked\r\n`, rest: chunked(b, n) })],
  ["chunked beside a short Content-Length", (b, n) => ({ headers: `transfer-encoding: chunked\r\ncontent-length: 4\r\n`, rest: chunked(b, n) })],
  ["two Content-Lengths", (b, n) => ({ headers: `content-length: ${n}\r\ncontent-length: ${n + 1}\r\n`, rest: `${b} ` })],
  ["a transfer coding other than chunked", (b, n) => ({ headers: "transfer-encoding: gzip, chunked\r\n", rest: chunked(b, n) })],
  ["chunk size not hex", (b, n) => ({ headers: "transfer-encoding: chunked\r\n", rest: chunked(b, n, "zz") })],
  ["chunk size past 2^64", (b, n) => ({ headers: "transfer-encoding: chunked\r\n", rest: chunked(b, n, "f".repeat(18)) })],
  ["negative Content-Length", (b) => ({ headers: "content-length: -1\r\n", rest: b })],
  ["Content-Length past 2^64", (b) => ({ headers: `content-length: ${"9".repeat(21)}\r\n`, rest: b })],
];

function request(h: Harness, path: string, caller: Caller, frame: { headers: string; rest: string }): string {
  const auth = caller.rootKey === null ? "" : `authorization: Bearer ${caller.rootKey}\r\n`;
  // A second request right behind the first, read only if the first's length was misread: it would store an API.
  const api = JSON.stringify({ name: "smuggled" });
  const smuggled = `POST /v2/apis.createApi HTTP/1.1\r\nhost: ${new URL(h.url).host}\r\nauthorization: Bearer ${h.rootKey}\r\ncontent-length: ${api.length}\r\n\r\n${api}`;
  return `POST ${path} HTTP/1.1\r\nhost: ${new URL(h.url).host}\r\ncontent-type: application/json\r\n${auth}${frame.headers}\r\n${frame.rest}${smuggled}`;
}

export async function runMalformed(c: TransportCampaign, ctx: RouteContext): Promise<void> {
  const [label, frame] = pick(c.next, MALFORMED);
  const caller = pick(c.next, ctx.callers);
  const body = JSON.stringify(await ctx.route.body(ctx.fixtures));
  const what = `${ctx.route.path} malformed framing (${label}) as ${caller.label}`;
  await settle(c.h);
  const before = digest(c.h);
  const exchange = await openExchange(c.h.url, request(c.h, ctx.route.path, caller, frame(body, Buffer.byteLength(body))));
  const limit = new Promise<"hung">((resolve) => setTimeout(() => resolve("hung"), c.exchangeLimitMs));
  const reply = await Promise.race([exchange.response.catch(() => undefined), limit]);
  const closed = await Promise.race([exchange.closed.then(() => true), limit.then(() => false)]);
  const p = c.summary.problems;
  c.count(reply === "hung" ? undefined : reply?.status);
  if (reply === "hung") p.push(`${what}: no answer within ${c.exchangeLimitMs} ms`);
  else if (reply === undefined) p.push(`${what}: the connection closed without an answer`);
  else {
    if (reply.status !== 400) p.push(`${what}: ${reply.status} ${JSON.stringify(reply.body).slice(0, 200)}`);
    if (reply.body !== "") p.push(...envelopeProblems(c.h, what, { status: reply.status, text: JSON.stringify(reply.body) }));
  }
  if (!closed) p.push(`${what}: the connection stayed open, so the request behind it may be read`);
  exchange.end();
  const changed = digest(c.h).changedByRequestsSince(before);
  if (changed.length > 0) p.push(`${what}: refused but changed ${changed.join(", ")}`);
}
