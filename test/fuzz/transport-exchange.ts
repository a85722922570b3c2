/**
 * One raw exchange of the transport campaign (transport.ts): a POST whose body is declared
 * (Content-Length) or chunked, written in pieces at full speed, trickled, held part-way or cut
 * off by closing, with every wait bounded so that a server that never answers is a finding, not
 * a stuck run. Built on test/support/raw-http.ts, which is what fetch cannot do.
 */
import { chunk, openExchange, postHead, type RawExchange } from "../support/raw-http.ts";
import type { Rng } from "../support/prng.ts";

export type Framing = "declared" | "chunked";

export interface ExchangeHead {
  path: string;
  /** The root key sent as `Bearer`; null sends no Authorization header. */
  rootKey: string | null;
  framing: Framing;
  /** Content-Length when declared: the body's length, unless the body is to be cut short. */
  declaredBytes?: number;
  contentType?: string;
  /** Chunk extensions (`;ext=n` after each chunk's size), which a server must accept and ignore. */
  chunkExtensions?: boolean;
}

export interface Reply {
  status: number;
  headers: Headers;
  /** The body as text (JSON bodies re-serialised), as campaign.ts's answerProblems reads it. */
  text: string;
}

/** What became of one exchange. */
export interface Result {
  reply?: Reply;
  /** Body bytes the client had written when the reply came (or when it stopped waiting). */
  sentWhenAnswered: number;
  /** From before the connection was opened to the reply. */
  elapsedMs: number;
  /** Neither a reply nor a closed connection within the time allowed. */
  hung: boolean;
}

const encoder = new TextEncoder();

/** `text` followed by spaces (valid JSON stays valid) to `bytes` bytes; never shorter than the text. */
export function padded(text: string, bytes: number): Uint8Array {
  const head = encoder.encode(text);
  if (head.byteLength >= bytes) return head;
  const out = new Uint8Array(bytes).fill(0x20);
  out.set(head);
  return out;
}

/** Random piece sizes summing to `total`, spread over scales from single bytes to 256 KiB, at most about `maxPieces` of them. */
export function pieceSizes(next: Rng, total: number, maxPieces = 400): number[] {
  const floor = Math.max(1, Math.ceil(total / maxPieces));
  const sizes: number[] = [];
  for (let left = total; left > 0;) {
    const size = Math.min(left, Math.max(floor, Math.round(2 ** (next() * 18))));
    sizes.push(size);
    left -= size;
  }
  return sizes;
}

/** An integer in [min, max], spread evenly over the orders of magnitude between them. */
export function logBetween(next: Rng, min: number, max: number): number {
  if (max <= min) return min;
  return Math.min(max, Math.round(min * (max / Math.max(1, min)) ** next()));
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A raw exchange of one body, whose writes are framed as its head says and which knows when it was answered. */
export class Exchange {
  private replyValue: Reply | undefined;
  private closedValue = false;
  private readonly startedMs = performance.now();
  private answeredMs: number | undefined;
  /** Body bytes written so far (chunk framing not counted): where the next write starts. */
  private written = 0;
  private writtenAtAnswer = 0;

  private constructor(private readonly raw: RawExchange, readonly head: ExchangeHead, readonly body: Uint8Array) {
    raw.response.then((r) => {
      this.answeredMs = performance.now();
      this.writtenAtAnswer = this.written;
      this.replyValue = { status: r.status, headers: r.headers, text: typeof r.body === "string" ? r.body : JSON.stringify(r.body) };
    }, () => {});
    void raw.closed.then(() => { this.closedValue = true; });
  }

  static async open(url: string, head: ExchangeHead, body: Uint8Array): Promise<Exchange> {
    const headers: Record<string, string> = {};
    const contentType = head.contentType ?? "application/json";
    if (contentType !== "") headers["content-type"] = contentType;
    if (head.rootKey !== null) headers.authorization = `Bearer ${head.rootKey}`;
    if (head.framing === "chunked") headers["transfer-encoding"] = "chunked";
    else headers["content-length"] = String(head.declaredBytes ?? body.byteLength);
    return new Exchange(await openExchange(url, postHead(url, head.path, headers)), head, body);
  }

  get answered(): boolean { return this.replyValue !== undefined; }
  get closed(): boolean { return this.closedValue; }

  /** Writes the next pieces of the body (sizes in bytes), each after `gapMs`; stops once answered or closed. */
  async write(sizes: readonly number[], opts: { gapMs?: number } = {}): Promise<void> {
    for (const size of sizes) {
      if (opts.gapMs) await Promise.race([delay(opts.gapMs), this.raw.response.catch(() => {})]);
      if (this.answered || this.closed || this.written >= this.body.byteLength) return;
      const piece = this.body.subarray(this.written, this.written + size);
      if (!(await this.raw.write(this.head.framing === "chunked" ? this.chunk(piece) : piece))) return;
      this.written += piece.byteLength;
    }
  }

  private chunk(piece: Uint8Array): Uint8Array {
    if (!this.head.chunkExtensions) return chunk(piece);
    return Buffer.concat([encoder.encode(`${piece.byteLength.toString(16)};ext=${this.written}\r\n`), piece, encoder.encode("\r\n")]);
  }

  /** The last chunk of a chunked body, once all of it is written (nothing for a declared body). */
  async finish(): Promise<void> {
    if (this.head.framing === "chunked" && this.written === this.body.byteLength && !this.answered && !this.closed) await this.raw.write("0\r\n\r\n");
  }

  /** Waits at most `limitMs` for the reply (or the connection's close without one). */
  async settle(limitMs: number): Promise<Result> {
    const outcome = await Promise.race([this.raw.response.then(() => "reply", () => "closed"), delay(limitMs).then(() => "timeout")]);
    return {
      ...(this.replyValue ? { reply: this.replyValue } : {}),
      sentWhenAnswered: this.replyValue ? this.writtenAtAnswer : this.written,
      elapsedMs: (this.answeredMs ?? performance.now()) - this.startedMs,
      hung: outcome === "timeout",
    };
  }

  /** Closes the client's side and waits at most `limitMs` for the connection to be gone; false if it lingers. */
  async close(limitMs: number): Promise<boolean> {
    this.raw.end();
    return this.closedWithin(limitMs);
  }

  /** Waits at most `limitMs` for the connection to close; false if it stays open. */
  async closedWithin(limitMs: number): Promise<boolean> {
    return Promise.race([this.raw.closed.then(() => true), delay(limitMs).then(() => false)]);
  }
}
