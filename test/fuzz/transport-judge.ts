/**
 * What the transport campaign (transport.ts) expects of an answer, from the shape of the request
 * that got it: its framing, its size against the route's limit and EARLY_AUTH_BODY_BYTES, its
 * caller, and whether its body was valid, trickled or part of a burst. A caller whose root key
 * fails is answered from its header, never after waiting for its body. The size rules come from
 * the service's own constants, so a limit that changes moves the expectations with it.
 */
import { EARLY_AUTH_BODY_BYTES } from "../../src/http/body-reader.ts";
import { ERROR_CATALOGUE, errorCodeByTypePath, errorTypePath } from "../../src/errors/catalogue.ts";
import type { Harness } from "../support/harness.ts";
import { envelopeProblems } from "./campaign.ts";
import type { Framing, Reply } from "./transport-exchange.ts";

export const TYPES = {
  tooLarge: errorTypePath("request_body_too_large"),
  timeout: errorTypePath("request_timeout"),
  overloaded: errorTypePath("overloaded"),
  unknownKey: errorTypePath("root_key_not_found"),
  // A missing Authorization header is upstream's schema failure: `invalid_input`.
  missingKey: errorTypePath("invalid_input"),
  malformedKey: errorTypePath("authentication_malformed"),
} as const;

/** Answers only the transport gives: a well-formed request within its bounds, in time and alone, gets none of them. */
const TRANSPORT_ONLY: ReadonlySet<string> = new Set([TYPES.tooLarge, TYPES.timeout, TYPES.overloaded, errorTypePath("client_closed_request")]);

/** A timer may fire a little before its time; a 408 this much before the deadline is still on time. */
const TIMER_SLACK_MS = 20;

export interface Caller {
  label: string;
  /** Sent as `Bearer`; null sends no Authorization header. */
  rootKey: string | null;
  /** The error type of a caller whose root key does not check out; undefined for one whose key does. */
  authError?: string;
}

export type Kind = "random size" | "near the limit" | "cut short" | "slow" | "keyless" | "burst" | "malformed framing" | "odd request";

export interface Shape {
  kind: Kind;
  caller: Caller;
  framing: Framing;
  /** Whether the body is the route's valid body (whitespace around it changes nothing). */
  valid: boolean;
  /** Body bytes declared (Content-Length) or, chunked, to be sent. */
  bytes: number;
}

export interface Expectation {
  describe: string;
  accepts(status: number, type: string | undefined): boolean;
}

const oneOf = (...types: string[]): Expectation => ({ describe: types.join(" or "), accepts: (_, type) => type !== undefined && types.includes(type) });

/** What a request of this shape must get when it is answered; `limitBytes` is its route's body limit. */
export function expectation(s: Shape, limitBytes: number): Expectation {
  const auth = s.caller.authError;
  // A trickled chunked body never gets near either size bound: only what has arrived is counted.
  const trickled = s.kind === "slow" && s.framing === "chunked";
  if (!trickled && s.bytes > limitBytes) return s.framing === "declared" || !auth ? oneOf(TYPES.tooLarge) : oneOf(TYPES.tooLarge, auth);
  if (auth) {
    // The body's 400 comes first only for a whole declared body of at most EARLY_AUTH_BODY_BYTES that was already there.
    const mayHaveArrived = s.framing === "declared" && s.bytes <= EARLY_AUTH_BODY_BYTES && s.kind !== "slow" && s.kind !== "keyless" && s.kind !== "cut short";
    return s.valid || !mayHaveArrived ? oneOf(auth) : { describe: `${auth} or a 400`, accepts: (status, type) => type === auth || status === 400 };
  }
  if (s.kind === "slow") return oneOf(TYPES.timeout);
  if (s.valid) return { describe: "200", accepts: (status) => status === 200 };
  return { describe: "the route's own answer", accepts: (_, type) => type === undefined || !TRANSPORT_ONLY.has(type) };
}

/** The error's type path (after `/api-reference/errors-v2/`), or undefined for a success or a body that is not the envelope. */
export function errorType(h: Harness, reply: Reply): string | undefined {
  try {
    const type = JSON.parse(reply.text)?.error?.type;
    const prefix = `${h.url}/docs/api-reference/errors-v2/`;
    return typeof type === "string" && type.startsWith(prefix) ? type.slice(prefix.length) : undefined;
  } catch {
    return undefined;
  }
}

export interface Circumstances {
  elapsedMs: number;
  bodyTimeoutMs: number;
  /** A 408 at or after the deadline is acceptable whatever was expected (the body was sent at full speed but arrived late). */
  lateTimeoutAcceptable: boolean;
  /** The client still held body bytes it had not sent when the answer came. */
  answeredWithUnsentBytes: boolean;
  /** Also acceptable here (in a burst: 503 overloaded and 429). */
  alsoAcceptable?: (status: number, type: string | undefined) => boolean;
}

/** Problems with one reply: the shared envelope rules, a documented error, Retry-After, the expectation, and closing after an early answer. */
export function replyProblems(h: Harness, what: string, reply: Reply, expected: Expectation, at: Circumstances): string[] {
  const problems = envelopeProblems(h, what, reply);
  const type = errorType(h, reply);
  const is = `${reply.status} ${type ?? ""}`.trim();
  if (reply.status >= 500 && !(reply.status === 503 && type === TYPES.overloaded)) problems.push(`${what}: ${is} ${reply.text.slice(0, 200)}`);
  const code = type === undefined ? undefined : errorCodeByTypePath(type);
  if (reply.status >= 400 && (code === undefined || ERROR_CATALOGUE[code].status !== reply.status)) problems.push(`${what}: ${is} is not a documented error`);
  if ((reply.status === 503 || reply.status === 429) && !/^[1-9]\d*$/.test(reply.headers.get("retry-after") ?? "")) problems.push(`${what}: ${reply.status} without Retry-After`);
  const onTime = at.elapsedMs >= at.bodyTimeoutMs - TIMER_SLACK_MS;
  if (type === TYPES.timeout && !onTime) problems.push(`${what}: 408 after ${Math.round(at.elapsedMs)} ms, before the ${at.bodyTimeoutMs} ms deadline`);
  const late = type === TYPES.timeout && onTime && at.lateTimeoutAcceptable;
  if (!expected.accepts(reply.status, type) && !late && !at.alsoAcceptable?.(reply.status, type)) {
    problems.push(`${what}: expected ${expected.describe}, got ${is} ${reply.text.slice(0, 160)}`);
  }
  if (at.answeredWithUnsentBytes && reply.headers.get("connection") !== "close") problems.push(`${what}: ${is} before its body was read, without Connection: close`);
  return problems;
}
