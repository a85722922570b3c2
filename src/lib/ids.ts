import { base58 } from "@scure/base";

/** Prefixes of every identifier the service hands out. */
export type IdPrefix =
  | "ws" | "api" | "ks" | "key" | "id" | "perm" | "role" | "rl" | "rlns" | "rlor" | "log" | "req" | "rk";

const ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
/** 232 = 4 × 58: bytes at or above it are skipped, so every character is equally likely. */
const UNBIASED_BELOW = 232;

/** Random characters after an identifier's prefix: 16 of base58 carry about 94 bits. */
const ID_RANDOM_CHARS = 16;

/** The alphabet's character codes, and a decoder for them (ASCII reads the same in UTF-8). */
const CODES = Uint8Array.from(ALPHABET, (c) => c.charCodeAt(0));
const ascii = new TextDecoder();

/**
 * `count` characters drawn uniformly from the base58 alphabet. Each comes from one random byte
 * (rejection sampling), which is several times cheaper than base58-encoding random bytes; request
 * ids are made on every request. The characters are gathered as bytes and decoded once, which is
 * cheaper than adding them to a string one by one.
 */
export function randomBase58(count: number): string {
  const out = new Uint8Array(count);
  let filled = 0;
  while (filled < count) {
    const bytes = crypto.getRandomValues(new Uint8Array(count - filled + 8));
    for (let i = 0; i < bytes.length && filled < count; i++) {
      const byte = bytes[i]!;
      if (byte < UNBIASED_BELOW) out[filled++] = CODES[byte % 58]!;
    }
  }
  return ascii.decode(out);
}

/** `<prefix>_<random base58>`: opaque, unique, and within the spec's `^[a-zA-Z0-9_]{3,255}$`. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase58(ID_RANDOM_CHARS)}`;
}

/** The random part of an end-user key: base58 of `byteLength` random bytes. */
export function randomKeyPart(byteLength: number): string {
  return base58.encode(crypto.getRandomValues(new Uint8Array(byteLength)));
}
