/**
 * Reading a request body within its bounds: the route's limit (413), whether the size is declared
 * or found while reading a chunked body; the body deadline, counted from the request's start
 * (408); a byte budget for all bodies being read together (503 with Retry-After). A body larger
 * than EARLY_AUTH_BODY_BYTES (declared, or once read past that) is read only after the root key
 * in the header has been checked, so an unknown key never makes the service buffer megabytes.
 *
 * A declared body is read by Bun in one piece (`text()`, bounded by its Content-Length, its share
 * of the budget reserved up front); a chunked one as a stream counted chunk by chunk, which costs
 * more per request (Bun builds a JS stream for it). Either way the deadline's timer is armed only
 * when the body is not all there yet (at the end of the event-loop turn, or after its first
 * chunk): most bodies come whole with their headers, and a timer per request would cost every
 * hot request. A chunked body that sends nothing at all is closed by the idle timeout.
 *
 * A request whose body was left unread, in part or whole, is answered with `Connection: close`
 * (see `leftUnread`): the client may still be sending, and Bun would otherwise go on reading
 * what it sends.
 */
import { AppError } from "../errors/app-error.ts";
import type { Principal } from "../services/auth/index.ts";
import type { RequestInfo } from "./request-context.ts";

/** A body larger than this is read only after its root key has been checked. */
export const EARLY_AUTH_BODY_BYTES = 64 * 1024;

export interface BodyBounds {
  /** How long a body may take to arrive, from the request's start. */
  timeoutMs: number;
  /** Body bytes all requests together may hold while being read. */
  bufferBudgetBytes: number;
}

/** One body to read: its route's limit, and its request's facts (its start; where the principal found before a large body is kept). */
export interface BodyRead {
  limitBytes: number;
  info: RequestInfo;
}

/** `Content-Length` as a number; undefined when absent (a chunked body) or not a number. */
function declaredLength(request: Request): number | undefined {
  const header = request.headers.get("content-length");
  if (header === null) return undefined;
  const n = Number(header);
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

/** Whether the request carries a body at all (declared, or chunked). */
function hasBody(request: Request): boolean {
  const declared = declaredLength(request);
  return declared === undefined ? request.headers.has("transfer-encoding") : declared > 0;
}

function tooLarge(limitBytes: number): AppError {
  return new AppError("request_body_too_large", { detail: `The request body is larger than ${limitBytes} bytes.` });
}

function timedOut(timeoutMs: number): AppError {
  return new AppError("request_timeout", { detail: `The request body did not arrive within ${timeoutMs} ms.` });
}

function clientClosed(cause: unknown): AppError {
  return new AppError("client_closed_request", { detail: "The connection closed before the request body arrived.", cause });
}

const NOT_YET = Symbol("not yet");

export class BodyReader {
  private bufferedBytes = 0;
  /** Requests whose body reading stopped before its end. */
  private readonly cutShort = new WeakSet<Request>();
  private readonly decoder = new TextDecoder();
  private turnEnd: Promise<typeof NOT_YET> | undefined;

  /** `authenticate` throws the root key's 400/401/403 AppError; it runs before a large body is read, and its principal is the route's. */
  constructor(private readonly bounds: BodyBounds, private readonly authenticate: (request: Request, info: RequestInfo) => Principal) {}

  /** The body as text (empty when there is none), or a 408/413/499/503 AppError, or the root key's error. */
  async text(request: Request, read: BodyRead): Promise<string> {
    const declared = declaredLength(request);
    if (declared !== undefined && declared > read.limitBytes) throw tooLarge(read.limitBytes);
    if (declared !== undefined && declared > EARLY_AUTH_BODY_BYTES) read.info.principal = this.authenticate(request, read.info);
    if (declared === 0) return "";
    const reserved = { bytes: 0 };
    try {
      if (declared !== undefined) {
        this.reserve(reserved, declared);
        return await this.readDeclared(request, read);
      }
      // `request.body` only here: Bun builds a stream object for it, which a declared body does without.
      const body = request.headers.has("transfer-encoding") ? request.body : null;
      return body === null ? "" : this.decode(await this.readChunks(request, body, read, reserved));
    } finally {
      this.bufferedBytes -= reserved.bytes;
    }
  }

  /**
   * Whether the request's body may still be on its way: read only in part, or not at all (a
   * route that never read it, an answer given before reading). Call it on the error path only.
   */
  leftUnread(request: Request): boolean {
    return this.cutShort.has(request) || (!request.bodyUsed && hasBody(request));
  }

  /** Adds `bytes` to this request's share of the budget, or 503 when the budget has no room. */
  private reserve(reserved: { bytes: number }, bytes: number): void {
    if (this.bufferedBytes + bytes > this.bounds.bufferBudgetBytes) {
      throw new AppError("overloaded", { detail: "The service holds as many request-body bytes as it accepts; retry shortly.", retryAfterS: 1 });
    }
    this.bufferedBytes += bytes;
    reserved.bytes += bytes;
  }

  /** Resolves at the end of the current event-loop turn (one setImmediate per turn, shared). */
  private endOfTurn(): Promise<typeof NOT_YET> {
    return (this.turnEnd ??= new Promise((resolve) => setImmediate(() => {
      this.turnEnd = undefined;
      resolve(NOT_YET);
    })));
  }

  /** A body of declared length: read whole by Bun, with a deadline only when it is not all there by the end of the turn. */
  private async readDeclared(request: Request, read: BodyRead): Promise<string> {
    const text = request.text();
    const early = await Promise.race([text, this.endOfTurn()]).catch((cause: unknown) => { throw clientClosed(cause); });
    if (early !== NOT_YET) return early;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(timedOut(this.bounds.timeoutMs)), Math.max(0, read.info.startedAtMs + this.bounds.timeoutMs - performance.now()));
    });
    try {
      return await Promise.race([text.catch((cause: unknown) => { throw clientClosed(cause); }), expired]);
    } catch (error) {
      this.cutShort.add(request);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  private async readChunks(request: Request, body: ReadableStream<Uint8Array>, read: BodyRead, reserved: { bytes: number }): Promise<Uint8Array[]> {
    const reader = body.getReader();
    const chunks: Uint8Array[] = [];
    let total = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let expired = false;
    try {
      for (;;) {
        const next = await reader.read().catch((cause: unknown) => { throw clientClosed(cause); });
        if (expired) throw timedOut(this.bounds.timeoutMs);
        if (next.done) return chunks;
        const before = total;
        total += next.value.byteLength;
        if (total > read.limitBytes) throw tooLarge(read.limitBytes);
        if (before <= EARLY_AUTH_BODY_BYTES && total > EARLY_AUTH_BODY_BYTES) read.info.principal = this.authenticate(request, read.info);
        this.reserve(reserved, next.value.byteLength);
        chunks.push(next.value);
        if (timer === undefined) {
          const remainingMs = read.info.startedAtMs + this.bounds.timeoutMs - performance.now();
          if (remainingMs <= 0) throw timedOut(this.bounds.timeoutMs);
          timer = setTimeout(() => {
            expired = true;
            void reader.cancel().catch(() => {});
          }, remainingMs);
        }
      }
    } catch (error) {
      this.cutShort.add(request);
      void reader.cancel().catch(() => {});
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  private decode(chunks: Uint8Array[]): string {
    if (chunks.length === 0) return "";
    if (chunks.length === 1) return this.decoder.decode(chunks[0]);
    return this.decoder.decode(Buffer.concat(chunks));
  }
}
