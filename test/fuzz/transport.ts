/**
 * The transport campaign: every POST route of the route table gets request bodies of random
 * shapes, from the all-powerful root key, one holding only the route's grants, none, a malformed
 * header and an unknown key. Shapes: chunked at random chunk sizes, within and over the route's
 * limit (read from the API document, as a caller would); declared just under, at and over it; a
 * declared length the client never sends before it closes; a body trickled past the body
 * deadline; a keyless body of any size trickled, which must be answered from its header before
 * it is all sent, with Connection: close (so must every answer to a keyless caller); bursts of
 * large bodies held open together, which the in-flight cap and the body budget must refuse in part
 * (503 with Retry-After) while the rest are answered as usual (transport-burst.ts); malformed
 * framing (transport-framing.ts); and odd request lines and Host headers (transport-odd.ts).
 * Chunks carry extensions now and then. The bodies are the route's valid one and the hostile ones
 * of mutate.ts, padded with whitespace to size.
 *
 * After every shape: the answer is judged (transport-judge.ts); a hang is a finding; a refusal
 * changed no table (digest.ts); no request stays in flight. At the end the service still
 * verifies a new key VALID. The harness must run with the short bounds of `transportHarnessEnv`.
 */
import { DEFAULT_BODY_LIMIT_BYTES } from "../../src/http/operation.ts";
import { randomKeyPart } from "../../src/lib/ids.ts";
import { createKey } from "../support/contract.ts";
import type { Harness } from "../support/harness.ts";
import { intBetween, pick, rng, type Rng } from "../support/prng.ts";
import { routeTable, type Fixtures, type Route } from "../support/route-table.ts";
import { bodySchemas, settle, type FuzzSummary } from "./campaign.ts";
import { digest } from "./digest.ts";
import { hostileBodies, type Hostile } from "./mutate.ts";
import { Exchange, logBetween, padded, pieceSizes, type Framing, type Result } from "./transport-exchange.ts";
import { expectation, replyProblems, TYPES, type Caller, type Kind, type Shape } from "./transport-judge.ts";
import { runBurst } from "./transport-burst.ts";
import { runMalformed } from "./transport-framing.ts";
import { runOdd } from "./transport-odd.ts";

const MiB = 1024 * 1024;

/** The bounds the campaign's harness runs with: short, so that deadlines and caps are reached fast. */
export const TRANSPORT_BOUNDS = { bodyTimeoutMs: 400, maxRequestsInFlight: 6, bodyBufferBytes: 10 * MiB } as const;

export function transportHarnessEnv(): Record<string, string> {
  return {
    TOLLGATE_BODY_TIMEOUT_MS: String(TRANSPORT_BOUNDS.bodyTimeoutMs),
    TOLLGATE_MAX_REQUESTS_IN_FLIGHT: String(TRANSPORT_BOUNDS.maxRequestsInFlight),
    TOLLGATE_BODY_BUFFER_MIB: String(TRANSPORT_BOUNDS.bodyBufferBytes / MiB),
    TOLLGATE_RATELIMIT_FLUSH_MS: "60000",
  };
}

export interface TransportSummary extends FuzzSummary {
  /** Shapes sent, by kind. */
  shapes: Record<string, number>;
}

const KINDS: readonly Kind[] = ["random size", "random size", "near the limit", "near the limit", "cut short", "slow", "keyless", "burst", "malformed framing", "odd request"];

/** Everything a shape needs to know about its route. */
export interface RouteContext {
  route: Route;
  fixtures: Fixtures;
  limitBytes: number;
  hostiles: Hostile[];
  callers: Caller[];
}

/** A body to send: the route's valid one or a hostile one. */
interface Body {
  label: string;
  text: string;
  contentType?: string;
  valid: boolean;
}

/** Each route's body limit as the API document states it (`x-max-body-bytes`; the default where it states none). */
async function bodyLimits(h: Harness): Promise<Map<string, number>> {
  const doc = await (await fetch(`${h.url}/docs/api/openapi.json`)).json() as { paths: Record<string, Record<string, any>> };
  const out = new Map<string, number>();
  for (const [path, ops] of Object.entries(doc.paths)) if (ops.post) out.set(path, ops.post["x-max-body-bytes"] ?? DEFAULT_BODY_LIMIT_BYTES);
  return out;
}

export class TransportCampaign {
  readonly summary: TransportSummary = { requests: 0, byStatus: {}, problems: [], shapes: {} };
  readonly exchangeLimitMs: number;

  /** `logLines`: the harness's log, when it keeps one, to find each odd request's access line in. */
  constructor(readonly h: Harness, readonly next: Rng, readonly bounds: typeof TRANSPORT_BOUNDS, readonly logLines?: readonly string[]) {
    this.exchangeLimitMs = bounds.bodyTimeoutMs + 5000;
  }

  /** Counts one exchange by its status; one the client gave up on (or that closed unanswered) counts as 499, as the service logs it. */
  count(answered: number | undefined): void {
    const status = answered ?? 499;
    this.summary.requests++;
    this.summary.byStatus[status] = (this.summary.byStatus[status] ?? 0) + 1;
  }

  /** Requests in flight as /metrics reports them (the scrape left out). */
  async inFlight(): Promise<number> {
    const text = await (await fetch(`${this.h.url}/metrics`)).text();
    return Number(/^tollgate_http_requests_in_flight (\d+)$/m.exec(text)?.[1] ?? Number.NaN);
  }

  /** Waits (bounded) for no request to be in flight; a request that stays is a finding. */
  async quiesce(after: string): Promise<void> {
    const until = performance.now() + this.exchangeLimitMs;
    let n = await this.inFlight();
    while (n !== 0 && performance.now() < until) {
      await Bun.sleep(5);
      n = await this.inFlight();
    }
    if (n !== 0) this.summary.problems.push(`${n} requests still in flight ${this.exchangeLimitMs} ms after ${after}`);
  }

  /** The digest's verdict on a shape: a refusal (no 2xx among its answers) changed no table. */
  async checkStored(what: string, before: ReturnType<typeof digest>, results: Result[]): Promise<void> {
    if (results.some((r) => r.reply !== undefined && r.reply.status < 300)) return settle(this.h);
    const changed = digest(this.h).changedByRequestsSince(before);
    if (changed.length > 0) this.summary.problems.push(`${what}: refused but changed ${changed.join(", ")}`);
  }

  async body(ctx: RouteContext, validOnly = false): Promise<Body> {
    if (validOnly || this.next() < 0.5) return { label: "valid body", text: JSON.stringify(await ctx.route.body(ctx.fixtures)), valid: true };
    const hostile = pick(this.next, ctx.hostiles);
    return { label: hostile.label, text: hostile.text, ...(hostile.contentType === undefined ? {} : { contentType: hostile.contentType }), valid: false };
  }

  /** Body bytes for a shape of `kind` whose text is `natural` bytes long. */
  size(kind: Kind, natural: number, limitBytes: number): number {
    const r = this.next();
    if (kind === "random size") return r < 0.4 ? natural : r < 0.8 ? logBetween(this.next, natural, limitBytes) : limitBytes + intBetween(this.next, 1, 256 * 1024);
    if (kind === "near the limit") return r < 0.25 ? natural : r < 0.5 ? limitBytes - intBetween(this.next, 1, 1024) : r < 0.75 ? limitBytes : limitBytes + intBetween(this.next, 1, 1024);
    if (kind === "cut short") return r < 0.5 ? natural : logBetween(this.next, natural, limitBytes);
    if (kind === "keyless") return logBetween(this.next, Math.max(natural, 2), limitBytes);
    // A trickled body needs a byte to send and one to hold back.
    return Math.max(natural, 2);
  }

  /** One shape of `kind` against the route: sent, judged, and its effect on the stored state checked. */
  async shape(ctx: RouteContext, kind: Kind): Promise<void> {
    this.summary.shapes[kind] = (this.summary.shapes[kind] ?? 0) + 1;
    if (kind === "burst") return runBurst(this, ctx);
    if (kind === "malformed framing") return runMalformed(this, ctx);
    if (kind === "odd request") return runOdd(this, ctx);
    const next = this.next;
    const unauthenticated = ctx.callers.filter((c) => c.authError !== undefined);
    const caller = pick(next, kind === "keyless" ? unauthenticated : ctx.callers);
    const framing: Framing = pick(next, ["declared", "chunked"] as const);
    const body = await this.body(ctx, kind === "keyless");
    const data = padded(body.text, this.size(kind, Buffer.byteLength(body.text), ctx.limitBytes));
    const declaredBytes = kind === "cut short" ? data.byteLength + intBetween(next, 1, 64 * 1024) : data.byteLength;
    const shape: Shape = { kind, caller, framing, valid: body.valid, bytes: framing === "declared" ? declaredBytes : data.byteLength };
    const what = `${ctx.route.path} ${kind} ${framing} ${shape.bytes} bytes as ${caller.label} [${body.label}]`;
    await settle(this.h);
    const before = digest(this.h);
    const head = {
      path: ctx.route.path, rootKey: caller.rootKey, framing, declaredBytes, chunkExtensions: next() < 0.3,
      ...(body.contentType === undefined ? {} : { contentType: body.contentType }),
    };
    const ex = await Exchange.open(this.h.url, head, data);
    const result = await this.send(ex, kind);
    this.count(result.reply?.status);
    this.judge(what, shape, ctx.limitBytes, result, data.byteLength);
    if (!(await ex.close(this.exchangeLimitMs))) this.summary.problems.push(`${what}: the connection stayed open after the client closed it`);
    await this.checkStored(what, before, [result]);
  }

  /** Writes the body as `kind` says and waits (bounded) for what comes back. */
  private async send(ex: Exchange, kind: Kind): Promise<Result> {
    const total = ex.body.byteLength;
    if (kind === "slow" || kind === "keyless") {
      // Small pieces at intervals, but never the end (a declared body's last byte, a chunked one's last chunk), so it
      // cannot be complete before the deadline. A chunked body gets at least one piece: one that sends nothing at all
      // is idle, which the idle timeout bounds instead (body-reader.ts).
      const sizes: number[] = [];
      for (let left = ex.head.framing === "chunked" ? total : total - 1; left > 0 && sizes.length < 400;) left -= sizes[sizes.push(Math.min(left, intBetween(this.next, 1, 16))) - 1]!;
      void ex.write(sizes, { gapMs: intBetween(this.next, 15, 60) });
    } else {
      await ex.write(pieceSizes(this.next, total));
      if (kind !== "cut short") await ex.finish();
      else if (!(await ex.close(this.exchangeLimitMs))) return { ...(await ex.settle(0)), hung: true };
    }
    return ex.settle(this.exchangeLimitMs);
  }

  private judge(what: string, shape: Shape, limitBytes: number, result: Result, totalBytes: number): void {
    const p = this.summary.problems;
    if (result.hung) p.push(`${what}: no answer and the connection still open after ${this.exchangeLimitMs} ms`);
    const expected = expectation(shape, limitBytes);
    const unsent = result.sentWhenAnswered < totalBytes;
    if (result.reply === undefined) {
      // Only a body cut short may go unanswered: nobody is left to receive the answer.
      if (shape.kind !== "cut short" && !result.hung) p.push(`${what}: the connection closed without an answer (expected ${expected.describe})`);
      return;
    }
    if (shape.kind === "keyless" && !unsent) p.push(`${what}: answered only once the whole body was sent`);
    if (shape.caller.authError !== undefined && result.reply.headers.get("connection") !== "close") p.push(`${what}: ${result.reply.status} to a caller without a valid root key, without Connection: close`);
    p.push(...replyProblems(this.h, what, result.reply, expected, {
      elapsedMs: result.elapsedMs,
      bodyTimeoutMs: this.bounds.bodyTimeoutMs,
      lateTimeoutAcceptable: shape.kind === "random size" || shape.kind === "near the limit" || shape.kind === "cut short",
      answeredWithUnsentBytes: unsent,
    }));
  }

  /** A new key verifies VALID and nothing is left in flight. */
  async stillServes(fixtures: Fixtures): Promise<void> {
    await this.quiesce("the last shape");
    const { key } = await createKey(this.h, { apiId: fixtures.apiId });
    const res = await this.h.post("/v2/keys.verifyKey", { key });
    if (res.status !== 200 || res.body?.data?.code !== "VALID") this.summary.problems.push(`afterwards a new key does not verify VALID: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
  }
}

/** The four callers of a route: every grant, exactly the route's grants, no root key, an unknown one. */
async function callersFor(h: Harness, route: Route): Promise<Caller[]> {
  return [
    { label: "root", rootKey: h.rootKey },
    { label: `only ${route.needs.join("+")}`, rootKey: await h.rootKeyWith(route.needs) },
    { label: "no root key", rootKey: null, authError: TYPES.missingKey },
    { label: "malformed root key", rootKey: "not a root key", authError: TYPES.malformedKey },
    { label: "unknown root key", rootKey: `tg_root_${randomKeyPart(24)}`, authError: TYPES.unknownKey },
  ];
}

/**
 * Runs the campaign: `perRoute` shapes per route, their kinds drawn at random. Problems are
 * collected, not thrown, so one run reports all of them.
 */
export async function runTransportCampaign(h: Harness, opts: { seed: number; perRoute: number; log?: (line: string) => void; logLines?: readonly string[] }): Promise<TransportSummary> {
  const next = rng(opts.seed);
  const table = routeTable(() => h);
  const fixtures = await table.setUp();
  const schemas = await bodySchemas(h);
  const limits = await bodyLimits(h);
  const c = new TransportCampaign(h, next, TRANSPORT_BOUNDS, opts.logLines);
  for (const route of table.routes) {
    const ctx: RouteContext = {
      route,
      fixtures,
      limitBytes: limits.get(route.path) ?? DEFAULT_BODY_LIMIT_BYTES,
      hostiles: hostileBodies(await route.body(fixtures), schemas.get(route.path)),
      callers: await callersFor(h, route),
    };
    for (let i = 0; i < opts.perRoute; i++) {
      await c.quiesce(`the previous shape on ${route.path}`);
      await c.shape(ctx, pick(next, KINDS));
    }
    opts.log?.(`${route.path}: ${opts.perRoute} shapes`);
  }
  await c.stillServes(fixtures);
  return c.summary;
}
