/**
 * JSON text written as UTF-8 bytes into one buffer kept from text to text. The writer thread builds
 * a raw batch row of about 100 bytes an event this way and hands SQLite the bytes themselves: built
 * from strings, every piece and every join of two was an object for the collector, and SQLite's
 * binding converts a long string far slower than it takes the bytes. Numbers are written as
 * JSON.stringify writes them; whole numbers and whole microseconds from their digits, anything
 * else from its own text.
 */

const encoder = new TextEncoder();

const ZERO = 48;
const DOT = 46;
const MINUS = 45;

/** Whole numbers up to this are written digit by digit (exact: every step divides a safe integer by 10). */
const MAX_DIGITS = Number.MAX_SAFE_INTEGER;

export class JsonBytes {
  private buffer = new Uint8Array(64 * 1024);
  private at = 0;

  /** Starts a new text; the buffer is kept. */
  reset(): void {
    this.at = 0;
  }

  /** Where the next byte goes: a mark for `since`. */
  get mark(): number {
    return this.at;
  }

  /**
   * The bytes written from `mark` on, as a view: valid until the next reset (a buffer that grows
   * later leaves the view on the old one, which keeps its bytes).
   */
  since(mark: number): Uint8Array {
    return this.buffer.subarray(mark, this.at);
  }

  /** Makes room for `bytes` more. */
  private reserve(bytes: number): void {
    if (this.at + bytes <= this.buffer.length) return;
    const bigger = new Uint8Array(Math.max(this.buffer.length * 2, this.at + bytes));
    bigger.set(this.buffer.subarray(0, this.at));
    this.buffer = bigger;
  }

  /** One ASCII character, by its code. */
  byte(code: number): void {
    this.reserve(1);
    this.buffer[this.at++] = code;
  }

  /** Bytes already in UTF-8: a piece of JSON made once (see `utf8`). */
  bytes(piece: Uint8Array): void {
    this.reserve(piece.length);
    this.buffer.set(piece, this.at);
    this.at += piece.length;
  }

  /** `s` as a JSON string. */
  string(s: string): void {
    this.bytes(utf8(JSON.stringify(s)));
  }

  /** A number as JSON.stringify writes it (null for what JSON cannot hold). */
  number(x: number): void {
    if (Number.isInteger(x) && Math.abs(x) <= MAX_DIGITS) this.whole(x);
    else this.ascii(Number.isFinite(x) ? `${x}` : "null");
  }

  /**
   * A number of milliseconds as JSON.stringify writes it, from integers when it is whole
   * microseconds: a decimal of at most 15 significant digits is the shortest text that reads back
   * as the double nearest to it, so the text is the same.
   */
  milliseconds(x: number): void {
    const us = Math.round(x * 1000);
    if (!(us > 0 && us < 1e15 && us / 1000 === x) || Number.isInteger(x)) {
      this.number(x);
      return;
    }
    const whole = Math.floor(us / 1000);
    this.whole(whole);
    let fraction = us - whole * 1000;
    this.reserve(4);
    this.buffer[this.at++] = DOT;
    let divisor = 100;
    while (fraction > 0) {
      const digit = Math.floor(fraction / divisor);
      this.buffer[this.at++] = ZERO + digit;
      fraction -= digit * divisor;
      divisor /= 10;
    }
  }

  /** A whole number of at most MAX_DIGITS, digit by digit; -0 as 0, as JSON has it. */
  private whole(n: number): void {
    this.reserve(17);
    if (n < 0) {
      this.buffer[this.at++] = MINUS;
      n = -n;
    }
    let digits = 1;
    for (let p = 10; p <= n; p *= 10) digits++;
    const end = this.at + digits;
    for (let i = end - 1; i >= this.at; i--) {
      const rest = Math.floor(n / 10);
      this.buffer[i] = ZERO + (n - rest * 10);
      n = rest;
    }
    this.at = end;
  }

  /** Text known to be ASCII (a number's). */
  private ascii(s: string): void {
    this.reserve(s.length);
    for (let i = 0; i < s.length; i++) this.buffer[this.at++] = s.charCodeAt(i);
  }
}

/** `s` in UTF-8. */
export function utf8(s: string): Uint8Array {
  return encoder.encode(s);
}
