import { base58 } from "@scure/base";

/** Prefixes of every identifier the service hands out. */
export type IdPrefix =
  | "ws" | "api" | "ks" | "key" | "id" | "perm" | "role" | "rl" | "rlns" | "rlor" | "log" | "req" | "rk";

const ID_RANDOM_BYTES = 12;

/** `<prefix>_<base58 random>`: opaque, unique, and within the spec's `^[a-zA-Z0-9_]{3,255}$`. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${base58.encode(crypto.getRandomValues(new Uint8Array(ID_RANDOM_BYTES)))}`;
}

/** The random part of an end-user key: base58 of `byteLength` random bytes. */
export function randomKeyPart(byteLength: number): string {
  return base58.encode(crypto.getRandomValues(new Uint8Array(byteLength)));
}
