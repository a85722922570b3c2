/**
 * Reading a request body within its bounds: the route's limit (413), whether the size is declared
 * or found while reading a chunked body; the body deadline, counted from the request's start
 * (408); a byte budget for all bodies being read together (503 with Retry-After). A body is read
 * only once the root key in its header checked out (pipeline.ts); for a request refused for its
 * key, `arrivedText` gives what already arrived, at most EARLY_AUTH_BODY_BYTES, without waiting.
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
import type { RequestInfo } from "./request-context.ts";

/** The largest body a request refused for its root key may still have read, when it is already there (its 400 comes first). */
export const EARLY_AUTH_BODY_BYTES = 64 * 1024;

export interface BodyBounds {
  /** How long a body may take to arrive, from the request's start. */
  timeoutMs: number;
  /** Body bytes all requests together may hold while being read. */
  bufferBudgetBytes: number;
}

/** One body to read: its route's limit, and its request's facts (its start). */
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

  constructor(private readonly bounds: BodyBounds) {}

  /** The body as text (empty when there is none), or a 408/413/499/503 AppError. */
  async text(request: Request, read: BodyRead): Promise<string> {
    const declared = declaredLength(request);
    if (declared !== undefined && declared > read.limitBytes) throw tooLarge(read.limitBytes);
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
   * For a request refused before its body was read (its root key failed): the body when it is
   * declared, at most EARLY_AUTH_BODY_BYTES and all there by the end of this turn; otherwise
   * undefined, never waiting longer. 413 for a declared body over the route's limit, as `text`.
   * Its answer closes the connection either way.
   */
  async arrivedText(request: Request, read: BodyRead): Promise<string | undefined> {
    this.cutShort.add(request);
    const declared = declaredLength(request);
    if (declared !== undefined && declared > read.limitBytes) throw tooLarge(read.limitBytes);
    if (declared === undefined) return hasBody(request) ? undefined : "";
    if (declared === 0) return "";
    if (declared > EARLY_AUTH_BODY_BYTES || this.bufferedBytes + declared > this.bounds.bufferBudgetBytes) return undefined;
    this.bufferedBytes += declared;
    try {
      const early = await Promise.race([request.text(), this.endOfTurn()]).catch(() => NOT_YET);
      return typeof early === "string" ? early : undefined;
    } finally {
      this.bufferedBytes -= declared;
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
        total += next.value.byteLength;
        if (total > read.limitBytes) throw tooLarge(read.limitBytes);
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
