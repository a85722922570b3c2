/**
 * Address ranges in CIDR notation (`127.0.0.0/8`, `::1`, `10.1.2.3`), for allow-lists such as
 * TOLLGATE_METRICS_ALLOW. Matching uses node:net's BlockList, which also matches IPv4-mapped IPv6
 * addresses (`::ffff:127.0.0.1`) against IPv4 ranges, as a dual-stack listener reports them.
 */
import { BlockList, isIP } from "node:net";

export interface AddressRange {
  address: string;
  prefix: number;
  family: "ipv4" | "ipv6";
}

/** Parses `address[/prefix]`; undefined when it is not one. A bare address is a single host. */
export function parseCidr(text: string): AddressRange | undefined {
  const [address = "", prefixText, extra] = text.trim().split("/");
  if (extra !== undefined) return undefined;
  const version = isIP(address);
  if (version === 0) return undefined;
  const family = version === 4 ? "ipv4" : "ipv6";
  const max = version === 4 ? 32 : 128;
  if (prefixText === undefined) return { address, prefix: max, family };
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > max) return undefined;
  return { address, prefix: Number(prefixText), family };
}

/** Whether an address falls in any of the ranges; built once, checked per request. */
export class AddressAllowList {
  private readonly list = new BlockList();

  constructor(ranges: readonly AddressRange[]) {
    for (const r of ranges) this.list.addSubnet(r.address, r.prefix, r.family);
  }

  allows(address: string | undefined): boolean {
    if (!address) return false;
    const version = isIP(address);
    if (version === 0) return false;
    return this.list.check(address, version === 4 ? "ipv4" : "ipv6");
  }
}
