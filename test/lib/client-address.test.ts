import { describe, expect, test } from "bun:test";
import { AddressAllowList, parseCidr } from "../../src/lib/cidr.ts";
import { clientAddress } from "../../src/lib/client-address.ts";

const trust = (...ranges: string[]) => new AddressAllowList(ranges.map((r) => parseCidr(r)!));
const LOOPBACK = trust("127.0.0.0/8", "::1");

describe("clientAddress", () => {
  test("without X-Forwarded-For: the peer", () => {
    expect(clientAddress("198.51.100.9", null, LOOPBACK)).toBe("198.51.100.9");
    expect(clientAddress("127.0.0.1", null, LOOPBACK)).toBe("127.0.0.1");
  });

  test("an untrusted peer's X-Forwarded-For is ignored: the client could have written anything", () => {
    expect(clientAddress("198.51.100.9", "203.0.113.7", LOOPBACK)).toBe("198.51.100.9");
  });

  test("behind a trusted proxy: the address the proxy appended", () => {
    expect(clientAddress("127.0.0.1", "203.0.113.7", LOOPBACK)).toBe("203.0.113.7");
  });

  test("a forged left part is skipped: the right-most untrusted hop wins", () => {
    expect(clientAddress("127.0.0.1", "10.9.9.9, 203.0.113.7", LOOPBACK)).toBe("203.0.113.7");
  });

  test("through a chain of trusted proxies, hop by hop", () => {
    const proxies = trust("127.0.0.0/8", "10.0.0.0/8");
    expect(clientAddress("127.0.0.1", "192.0.2.1, 203.0.113.7, 10.0.0.2, 10.0.0.1", proxies)).toBe("203.0.113.7");
    expect(clientAddress("127.0.0.1", "10.0.0.3, 10.0.0.2", proxies)).toBe("10.0.0.3");
  });

  test("garbage in the header ends the walk at the last real address", () => {
    expect(clientAddress("127.0.0.1", "203.0.113.7, not-an-ip", LOOPBACK)).toBe("127.0.0.1");
    expect(clientAddress("127.0.0.1", "", LOOPBACK)).toBe("127.0.0.1");
  });

  test("an IPv6 zone, which can carry any text, is not an address from the header", () => {
    expect(clientAddress("127.0.0.1", `fe80::1%${"x".repeat(10_000)}`, LOOPBACK)).toBe("127.0.0.1");
    expect(clientAddress("127.0.0.1", "203.0.113.7, fe80::1%eth0", LOOPBACK)).toBe("127.0.0.1");
  });

  test("IPv6, and IPv4 clients of a dual-stack listener without the ::ffff: prefix", () => {
    expect(clientAddress("::1", "2001:db8::7", LOOPBACK)).toBe("2001:db8::7");
    expect(clientAddress("::ffff:198.51.100.9", null, LOOPBACK)).toBe("198.51.100.9");
    expect(clientAddress("::ffff:127.0.0.1", "203.0.113.7", LOOPBACK)).toBe("203.0.113.7");
  });

  test("no proxies trusted, no peer", () => {
    expect(clientAddress("127.0.0.1", "203.0.113.7", trust())).toBe("127.0.0.1");
    expect(clientAddress(undefined, "203.0.113.7", LOOPBACK)).toBeUndefined();
  });
});
