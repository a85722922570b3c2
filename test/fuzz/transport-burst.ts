/**
 * The burst shape of the transport campaign: more large bodies than the in-flight cap, opened
 * together and held part-way until the service has seen every head, so that the cap and the body
 * budget must refuse some (503 `overloaded` with Retry-After) and may hold no more than they
 * allow; then the held bodies are sent in full, at once, and must be answered as usual (or, for a
 * chunked body that the budget has no room for as it arrives, refused the same way).
 */
import { EARLY_AUTH_BODY_BYTES } from "../../src/http/body-reader.ts";
import { intBetween, pick } from "../support/prng.ts";
import { settle } from "./campaign.ts";
import { digest } from "./digest.ts";
import { Exchange, logBetween, padded, pieceSizes, type Framing } from "./transport-exchange.ts";
import { expectation, replyProblems, TYPES, type Shape } from "./transport-judge.ts";
import type { RouteContext, TransportCampaign } from "./transport.ts";

interface Planned {
  shape: Shape;
  data: Uint8Array;
  /** Body bytes sent before the service is known to have seen every head. */
  prefixBytes: number;
  restSizes: number[];
}

async function plan(c: TransportCampaign, ctx: RouteContext): Promise<Planned[]> {
  const authorized = ctx.callers.filter((x) => x.authError === undefined);
  const count = c.bounds.maxRequestsInFlight + intBetween(c.next, 2, 6);
  // Half the bursts of bodies so large that a few fill the body budget (where the route's limit allows), half of smaller ones.
  const largest = Math.min(ctx.limitBytes, c.bounds.bodyBufferBytes / 2);
  const smallest = c.next() < 0.5 ? Math.min(largest, c.bounds.bodyBufferBytes / c.bounds.maxRequestsInFlight) : 2 * EARLY_AUTH_BODY_BYTES;
  const out: Planned[] = [];
  for (let i = 0; i < count; i++) {
    const caller = pick(c.next, authorized);
    const framing: Framing = pick(c.next, ["declared", "chunked"] as const);
    const body = await c.body(ctx, true);
    const data = padded(body.text, logBetween(c.next, smallest, largest));
    const prefixBytes = intBetween(c.next, 1, Math.min(data.byteLength - 1, 32 * 1024));
    out.push({ shape: { kind: "burst", caller, framing, valid: true, bytes: data.byteLength }, data, prefixBytes, restSizes: pieceSizes(c.next, data.byteLength - prefixBytes) });
  }
  return out;
}

/**
 * Waits (at most half the body deadline) until each exchange is either answered or in flight, the
 * same in two scrapes running: a refusal on its way to the client is still in flight for a moment.
 * Whether that state was reached.
 */
async function untilEveryHeadSeen(c: TransportCampaign, exchanges: Exchange[]): Promise<boolean> {
  const until = performance.now() + c.bounds.bodyTimeoutMs / 2;
  let previous = "";
  while (performance.now() < until) {
    const answered = exchanges.filter((ex) => ex.answered).length;
    const inFlight = await c.inFlight();
    const state = `${answered}/${inFlight}`;
    if (inFlight + answered === exchanges.length && state === previous) return true;
    previous = state;
  }
  return false;
}

export async function runBurst(c: TransportCampaign, ctx: RouteContext): Promise<void> {
  const planned = await plan(c, ctx);
  const what = `${ctx.route.path} burst of ${planned.length}`;
  const p = c.summary.problems;
  await settle(c.h);
  const before = digest(c.h);
  const exchanges: Exchange[] = [];
  for (const x of planned) {
    const ex = await Exchange.open(c.h.url, { path: ctx.route.path, rootKey: x.shape.caller.rootKey, framing: x.shape.framing }, x.data);
    await ex.write([x.prefixBytes]);
    exchanges.push(ex);
  }
  const settled = await untilEveryHeadSeen(c, exchanges);
  const refusedEarly = new Set(exchanges.filter((ex) => ex.answered));
  const held = planned.filter((_, i) => !refusedEarly.has(exchanges[i]!));
  if (settled) {
    if (held.length > c.bounds.maxRequestsInFlight) p.push(`${what}: ${held.length} held at once, over the cap of ${c.bounds.maxRequestsInFlight}`);
    const reserved = held.reduce((sum, x) => sum + (x.shape.framing === "declared" ? x.data.byteLength : x.prefixBytes), 0);
    if (reserved > c.bounds.bodyBufferBytes) p.push(`${what}: ${reserved} body bytes held at once, over the budget of ${c.bounds.bodyBufferBytes}`);
  }
  await Promise.all(exchanges.map(async (ex, i) => {
    if (refusedEarly.has(ex)) return;
    await ex.write(planned[i]!.restSizes);
    await ex.finish();
  }));
  const results = await Promise.all(exchanges.map((ex) => ex.settle(c.exchangeLimitMs)));
  for (const [i, result] of results.entries()) {
    const x = planned[i]!;
    const early = refusedEarly.has(exchanges[i]!);
    const one = `${what}, #${i} ${x.shape.framing} ${x.data.byteLength} bytes as ${x.shape.caller.label}${early ? " (answered while held)" : ""}`;
    c.count(result.reply?.status);
    if (result.hung) p.push(`${one}: no answer and the connection still open after ${c.exchangeLimitMs} ms`);
    if (result.reply === undefined) {
      if (!result.hung) p.push(`${one}: the connection closed without an answer`);
      continue;
    }
    const expected = early ? { describe: TYPES.overloaded, accepts: (_: number, type: string | undefined) => type === TYPES.overloaded } : expectation(x.shape, ctx.limitBytes);
    p.push(...replyProblems(c.h, one, result.reply, expected, {
      elapsedMs: result.elapsedMs,
      bodyTimeoutMs: c.bounds.bodyTimeoutMs,
      lateTimeoutAcceptable: !early,
      answeredWithUnsentBytes: result.sentWhenAnswered < x.data.byteLength,
      ...(early ? {} : { alsoAcceptable: (status: number, type: string | undefined) => type === TYPES.overloaded || status === 429 }),
    }));
  }
  for (const ex of exchanges) if (!(await ex.close(c.exchangeLimitMs))) p.push(`${what}: a connection stayed open after the client closed it`);
  await c.checkStored(what, before, results);
}
