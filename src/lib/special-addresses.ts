import { BlockList, isIP } from "node:net";

/**
 * Addresses that are not globally reachable, from the IANA IPv4 and IPv6 Special-Purpose Address
 * Registries (RFC 6890 and its updates; entries whose "Globally Reachable" is False or N/A) and the
 * IANA address-space registries (IPv4 multicast and class E; IPv6 outside 2000::/3, site-local).
 * https://www.iana.org/assignments/iana-ipv4-special-registry
 * https://www.iana.org/assignments/iana-ipv6-special-registry
 * The IPv6 forms that carry an IPv4 address (mapped, NAT64 64:ff9b::/96, 6to4) are judged by that
 * IPv4 address (embeddedIpv4), before this table.
 */
const NON_GLOBAL: readonly (readonly [network: string, bits: number, what: string])[] = [
  ["0.0.0.0", 8, "this network, unspecified (RFC 791)"],
  ["10.0.0.0", 8, "private (RFC 1918)"],
  ["100.64.0.0", 10, "shared address space, carrier-grade NAT (RFC 6598)"],
  ["127.0.0.0", 8, "loopback (RFC 1122)"],
  ["169.254.0.0", 16, "link-local, cloud metadata 169.254.169.254 (RFC 3927)"],
  ["172.16.0.0", 12, "private (RFC 1918)"],
  ["192.0.0.0", 24, "IETF protocol assignments, DS-Lite, NAT64 discovery (RFC 6890)"],
  ["192.0.2.0", 24, "documentation TEST-NET-1 (RFC 5737)"],
  ["192.88.99.0", 24, "deprecated 6to4 relay anycast (RFC 7526)"],
  ["192.168.0.0", 16, "private (RFC 1918)"],
  ["198.18.0.0", 15, "benchmarking (RFC 2544)"],
  ["198.51.100.0", 24, "documentation TEST-NET-2 (RFC 5737)"],
  ["203.0.113.0", 24, "documentation TEST-NET-3 (RFC 5737)"],
  ["224.0.0.0", 4, "multicast (RFC 5771)"],
  ["240.0.0.0", 4, "reserved, limited broadcast 255.255.255.255 (RFC 1112, RFC 919)"],
  ["::", 128, "unspecified (RFC 4291)"],
  ["::1", 128, "loopback (RFC 4291)"],
  ["::", 96, "IPv4-compatible, deprecated (RFC 4291)"],
  ["::", 3, "reserved by the IETF outside global unicast: 100::/64 discard, 64:ff9b:1::/48 local NAT64"],
  ["100::", 64, "discard-only (RFC 6666)"],
  ["100:0:0:1::", 64, "dummy prefix (RFC 9780)"],
  ["64:ff9b:1::", 48, "local-use NAT64 (RFC 8215)"],
  ["2001::", 23, "IETF protocol assignments: Teredo 2001::/32, benchmarking 2001:2::/48, ORCHID"],
  ["2001::", 32, "Teredo (RFC 4380)"],
  ["2001:2::", 48, "benchmarking (RFC 5180)"],
  ["2001:db8::", 32, "documentation (RFC 3849)"],
  ["3fff::", 20, "documentation (RFC 9637)"],
  ["4000::", 2, "not allocated (IANA IPv6 address space)"],
  ["5f00::", 16, "segment routing SIDs (RFC 9602)"],
  ["8000::", 1, "not allocated, except the ranges below"],
  ["fc00::", 7, "unique local (RFC 4193)"],
  ["fe80::", 10, "link-local (RFC 4291)"],
  ["fec0::", 10, "site-local, deprecated (RFC 3879)"],
  ["ff00::", 8, "multicast (RFC 4291)"],
];

/** Globally reachable exceptions inside 2001::/23 (the IPv6 registry's "True" entries). */
const GLOBAL_IN_2001: readonly (readonly [string, number])[] = [
  ["2001:1::1", 128],
  ["2001:1::2", 128],
  ["2001:1::3", 128],
  ["2001:3::", 32],
  ["2001:4:112::", 48],
  ["2001:20::", 28],
  ["2001:30::", 28],
];

/**
 * One family's rows as a BlockList. The families are kept apart: a BlockList checks an IPv4
 * address against its IPv6 rules too (as ::ffff:a.b.c.d), which ::/3 would always match.
 */
const blockList = (rows: readonly (readonly [string, number, ...unknown[]])[], family: 4 | 6): BlockList => {
  const list = new BlockList();
  for (const [net, bits] of rows) {
    if (isIP(net) === family) list.addSubnet(net, bits, family === 4 ? "ipv4" : "ipv6");
  }
  return list;
};
const NON_GLOBAL_V4 = blockList(NON_GLOBAL, 4);
const NON_GLOBAL_V6 = blockList(NON_GLOBAL, 6);
const GLOBAL_V6 = blockList(GLOBAL_IN_2001, 6);

/** An IPv6 address as its eight 16-bit groups (a trailing dotted quad counts as two). */
function groupsOf(address: string): number[] {
  let text = address.toLowerCase();
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes("::") ? text.split("::") : [text, null];
  const part = (p: string | null | undefined) => (p ? p.split(":").map((g) => parseInt(g, 16)) : []);
  const left = part(head);
  const right = part(tail);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

const ipv4Of = (hi: number, lo: number): string => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/**
 * The IPv4 address an IPv6 one carries where the network delivers it there: IPv4-mapped
 * `::ffff:a.b.c.d` (a dual-stack socket connects to the IPv4 address), NAT64 `64:ff9b::/96` (a
 * gateway translates it) and 6to4 `2002:AABB:CCDD::/48`. Null for any other address.
 */
export function embeddedIpv4(address: string): string | null {
  if (isIP(address) !== 6) return null;
  const g = groupsOf(address);
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && g[5] === 0xffff) return ipv4Of(g[6]!, g[7]!);
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return ipv4Of(g[6]!, g[7]!);
  if (g[0] === 0x2002) return ipv4Of(g[1]!, g[2]!);
  return null;
}

/** An IP address without IPv6 brackets and zone (`[fe80::1%eth0]` → `fe80::1`). */
export const bareAddress = (host: string): string => host.replace(/^\[|\]$/g, "").replace(/%.*$/, "");

/**
 * Whether an IP address is not globally reachable (NON_GLOBAL above), in any spelling Node
 * accepts; false for a host name. IPv6 forms carrying an IPv4 address are judged by it.
 */
export function isPrivateAddress(address: string): boolean {
  const bare = bareAddress(address);
  const family = isIP(bare);
  if (family === 4) return NON_GLOBAL_V4.check(bare, "ipv4");
  if (family !== 6) return false;
  const v4 = embeddedIpv4(bare);
  if (v4 !== null) return NON_GLOBAL_V4.check(v4, "ipv4");
  if (GLOBAL_V6.check(bare, "ipv6")) return false;
  return NON_GLOBAL_V6.check(bare, "ipv6");
}

/**
 * `localhost` and names under it, in any case, with or without the root's dot: RFC 6761 §6.3
 * reserves them for loopback, whatever a resolver answers (or fails to answer) for them.
 */
export const isLocalhostName = (host: string): boolean =>
  /(^|\.)localhost$/.test(host.toLowerCase().replace(/\.$/, ""));
