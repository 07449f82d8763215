import { describe, expect, it } from "vitest";
import { embeddedIpv4, isLocalhostName, isPrivateAddress } from "../../src/lib/special-addresses.js";

/**
 * The range table (IANA special-purpose registries): the pure check only. Public addresses here
 * are inputs to the function, never connected to.
 */
describe("isPrivateAddress", () => {
  it.each([
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "this network"],
    ["10.20.30.40", "RFC 1918"],
    ["100.64.0.1", "CGNAT"],
    ["100.127.255.254", "CGNAT"],
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["169.254.169.254", "cloud metadata"],
    ["172.16.0.1", "RFC 1918"],
    ["172.31.255.255", "RFC 1918"],
    ["192.0.0.1", "IETF protocol assignments"],
    ["192.0.0.170", "NAT64 discovery"],
    ["192.0.2.10", "TEST-NET-1"],
    ["192.88.99.1", "6to4 relay anycast"],
    ["192.168.1.1", "RFC 1918"],
    ["198.18.0.1", "benchmarking"],
    ["198.19.255.255", "benchmarking"],
    ["198.51.100.7", "TEST-NET-2"],
    ["203.0.113.9", "TEST-NET-3"],
    ["224.0.0.251", "multicast"],
    ["239.255.255.250", "multicast"],
    ["240.0.0.1", "reserved"],
    ["255.255.255.255", "broadcast"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["[::1]", "bracketed"],
    ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
    ["::ffff:7f00:1", "IPv4-mapped, hex"],
    ["::ffff:10.0.0.1", "IPv4-mapped private"],
    ["::127.0.0.1", "IPv4-compatible"],
    ["::8.8.8.8", "IPv4-compatible (deprecated)"],
    ["64:ff9b::7f00:1", "NAT64 of loopback"],
    ["64:ff9b::169.254.169.254", "NAT64 of metadata"],
    ["64:ff9b:1::808:808", "local-use NAT64"],
    ["100::1", "discard-only"],
    ["2001::1", "Teredo"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"],
    ["2001:2::1", "benchmarking"],
    ["2001:10::1", "ORCHID"],
    ["2001:db8::1", "documentation"],
    ["3fff::1", "documentation"],
    ["2002:7f00:1::1", "6to4 of loopback"],
    ["2002:c0a8:101::1", "6to4 of 192.168.1.1"],
    ["5f00::1", "SRv6"],
    ["fc00::1", "ULA"],
    ["fd12:3456::1", "ULA"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local with zone"],
    ["febf::1", "link-local"],
    ["fec0::1", "site-local"],
    ["ff02::1", "multicast"],
    ["4000::1", "unallocated"],
    ["8000::1", "unallocated"],
  ])("%s (%s) is private", (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each([
    "8.8.8.8",
    "1.1.1.1",
    "100.63.255.255",
    "100.128.0.0",
    "172.15.255.255",
    "172.32.0.0",
    "192.0.1.255",
    "192.0.3.1",
    "198.17.255.255",
    "198.20.0.0",
    "223.255.255.255",
    "2606:4700::1111",
    "2a00:1450:4001::200e",
    "::ffff:8.8.8.8",
    "64:ff9b::8.8.8.8",
    "2002:808:808::1",
    "2001:4:112::1",
    "2001:20::1",
  ])("%s is public", (address) => {
    expect(isPrivateAddress(address)).toBe(false);
  });

  it("a host name is not an address (names are checked on what they resolve to)", () => {
    expect(isPrivateAddress("example.com")).toBe(false);
  });
});

describe("embeddedIpv4 and localhost names", () => {
  it("reads the IPv4 address of mapped, NAT64 and 6to4 forms only", () => {
    expect(embeddedIpv4("::ffff:7f00:1")).toBe("127.0.0.1");
    expect(embeddedIpv4("64:ff9b::a00:1")).toBe("10.0.0.1");
    expect(embeddedIpv4("2002:c0a8:101::1")).toBe("192.168.1.1");
    expect(embeddedIpv4("2606:4700::1111")).toBeNull();
    expect(embeddedIpv4("127.0.0.1")).toBeNull();
  });

  it("localhost in any case, with the root's dot, and names under it", () => {
    for (const n of ["localhost", "LOCALHOST.", "LocalHost", "a.b.localhost", "x.localhost."]) {
      expect(isLocalhostName(n), n).toBe(true);
    }
    for (const n of ["localhost.example.com", "mylocalhost", "example.com"])
      expect(isLocalhostName(n), n).toBe(false);
  });
});
