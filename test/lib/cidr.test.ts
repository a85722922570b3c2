/** TOLLGATE_METRICS_ALLOW's address ranges: parsing, and matching as a dual-stack listener reports clients. */
import { describe, expect, test } from "bun:test";
import { AddressAllowList, parseCidr } from "../../src/lib/cidr.ts";

describe("parseCidr", () => {
  test.each([
    ["127.0.0.0/8", { address: "127.0.0.0", prefix: 8, family: "ipv4" }],
    ["10.1.2.3", { address: "10.1.2.3", prefix: 32, family: "ipv4" }],
    [" 192.168.0.0/16 ", { address: "192.168.0.0", prefix: 16, family: "ipv4" }],
    ["::1", { address: "::1", prefix: 128, family: "ipv6" }],
    ["fd00::/8", { address: "fd00::", prefix: 8, family: "ipv6" }],
  ])("%p", (text, range) => {
    expect(parseCidr(text)).toEqual(range as never);
  });

  test.each(["", "localhost", "10.0.0.0/33", "::1/129", "1.2.3.4/8/1", "10.0.0.0/", "10.0.0.0/-1", "10.0.0.0/1e1", "300.1.1.1"])("rejects %p", (text) => {
    expect(parseCidr(text)).toBeUndefined();
  });
});

describe("AddressAllowList", () => {
  const list = new AddressAllowList(["127.0.0.0/8", "::1", "10.1.0.0/16", "fd00::/8"].map((r) => parseCidr(r)!));

  test.each([
    ["127.0.0.1", true], ["127.9.9.9", true], ["::1", true], ["10.1.255.255", true], ["fd12::1", true],
    // A dual-stack listener (TOLLGATE_HOST=::) reports IPv4 clients as IPv4-mapped IPv6 addresses.
    ["::ffff:127.0.0.1", true], ["::ffff:10.1.2.3", true],
    ["10.2.0.1", false], ["::ffff:10.2.0.1", false], ["fe80::1", false], ["8.8.8.8", false], ["::2", false],
  ])("%p → %p", (address, allowed) => {
    expect(list.allows(address)).toBe(allowed);
  });

  test("no address, or not an address, is never allowed", () => {
    expect(list.allows(undefined)).toBe(false);
    expect(list.allows("")).toBe(false);
    expect(list.allows("not-an-ip")).toBe(false);
  });
});
