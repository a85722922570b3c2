/**
 * The address a request came from, as the audit log records it. The socket's peer is the only
 * address nobody can forge; X-Forwarded-For is believed only as far as it was written by trusted
 * proxies (TOLLGATE_TRUSTED_PROXIES). Each proxy appends the address it received the request from,
 * so the header is read from the right, hop by hop, while the hop that wrote it is trusted. A hop
 * is believed only as a plain address: node:net also accepts an IPv6 address with a zone (`%` and
 * an interface name of any length), which no proxy writes and which would carry arbitrary text
 * into the audit log.
 */
import { isIP } from "node:net";
import type { AddressAllowList } from "./cidr.ts";

/** `::ffff:1.2.3.4` (an IPv4 client of a dual-stack listener) → `1.2.3.4`. */
function plain(address: string): string {
  return address.startsWith("::ffff:") && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/** A forwarded hop that is an IP address without a zone: at most 45 characters. */
function isPlainAddress(hop: string): boolean {
  return isIP(hop) !== 0 && !hop.includes("%");
}

/** Whether the socket's peer is a trusted proxy, whose forwarding headers are believed. */
export function isTrustedPeer(peer: string | undefined, trusted: AddressAllowList): boolean {
  return peer !== undefined && trusted.allows(plain(peer));
}

/**
 * The client's address: `peer` itself unless it is a trusted proxy; then the right-most address of
 * `forwardedFor` that no trusted proxy stands for (the left-most when all of them are trusted). An
 * entry that is not an IP address ends the walk at the last address that is. Undefined without a peer.
 */
export function clientAddress(peer: string | undefined, forwardedFor: string | null, trusted: AddressAllowList): string | undefined {
  if (!peer) return undefined;
  let address = plain(peer);
  if (!forwardedFor) return address;
  const hops = forwardedFor.split(",");
  for (let i = hops.length - 1; i >= 0 && trusted.allows(address); i--) {
    const hop = hops[i]!.trim();
    if (!isPlainAddress(hop)) break;
    address = plain(hop);
  }
  return address;
}
