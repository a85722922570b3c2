/**
 * The origin (`scheme://host[:port]`) a client used to reach the service, for URLs handed back to
 * it (the API reference's `servers`). The request's own URL carries its Host header; a proxy's
 * X-Forwarded-Proto and X-Forwarded-Host replace them only when the socket's peer is a trusted
 * proxy (TOLLGATE_TRUSTED_PROXIES), as X-Forwarded-For is believed in client-address.ts. A
 * request without a Host (HTTP/1.0) has only a path for its URL: its origin is "" (this server).
 */
import type { AddressAllowList } from "./cidr.ts";
import { isTrustedPeer } from "./client-address.ts";

/** A host name or IPv4 address, or a bracketed IPv6 address, with an optional port: nothing else reaches the URL. */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/** The first value of a comma-separated header (the proxy nearest the client wrote it), trimmed. */
const first = (value: string | null) => value?.split(",")[0]?.trim().toLowerCase() || undefined;

export function requestOrigin(request: Request, peer: string | undefined, trusted: AddressAllowList): string {
  const url = URL.parse(request.url);
  if (url === null) return "";
  if (!isTrustedPeer(peer, trusted)) return url.origin;
  const proto = first(request.headers.get("x-forwarded-proto"));
  const host = first(request.headers.get("x-forwarded-host"));
  const scheme = proto === "http" || proto === "https" ? proto : url.protocol.slice(0, -1);
  return `${scheme}://${host !== undefined && HOST.test(host) ? host : url.host}`;
}
