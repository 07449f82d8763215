import { BlockList, isIP } from "node:net";
import { lookup as dnsLookup, type LookupAddress } from "node:dns";

/**
 * Addresses a destination may not resolve to when BROADCAST_REFUSE_PRIVATE_ADDRESSES is on:
 * unspecified, loopback, RFC 1918 private, carrier-grade NAT, link-local (cloud metadata), IPv6
 * unique-local and link-local, and the IPv6 forms that carry one of those IPv4 addresses
 * (IPv4-mapped and -compatible, NAT64, 6to4).
 */
const PRIVATE = new BlockList();
for (const [net, bits] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.168.0.0", 16],
] as const) {
  PRIVATE.addSubnet(net, bits, "ipv4");
}
for (const [net, bits] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
] as const) {
  PRIVATE.addSubnet(net, bits, "ipv6");
}

/** An IPv6 address as its eight 16-bit groups (a trailing dotted quad counts as two). */
function groupsOf(address: string): number[] {
  let text = address.toLowerCase().replace(/%.*$/, "");
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
 * The IPv4 address an IPv6 one carries, where the network may deliver it there: IPv4-compatible
 * `::a.b.c.d` (deprecated), NAT64 `64:ff9b::/96` and its local-use `64:ff9b:1::/48` (a NAT64
 * gateway translates to the IPv4 address, private ones included) and 6to4 `2002:AABB:CCDD::/48`.
 * (IPv4-mapped `::ffff:a.b.c.d` BlockList checks against the IPv4 rules itself.)
 */
function embeddedIpv4(address: string): string | null {
  const g = groupsOf(address);
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 6) && (g[6] !== 0 || g[7]! > 1)) return ipv4Of(g[6]!, g[7]!);
  if (g[0] === 0x64 && g[1] === 0xff9b && (zeros(2, 6) || g[2] === 1)) return ipv4Of(g[6]!, g[7]!);
  if (g[0] === 0x2002) return ipv4Of(g[1]!, g[2]!);
  return null;
}

export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return PRIVATE.check(address, "ipv4");
  if (family === 6) {
    const v4 = embeddedIpv4(address);
    if (v4 !== null && PRIVATE.check(v4, "ipv4")) return true;
    return PRIVATE.check(address, "ipv6");
  }
  return false;
}

export class RefusedAddressError extends Error {
  constructor(host: string) {
    super(`refused: ${host} resolves to a private or loopback address (BROADCAST_REFUSE_PRIVATE_ADDRESSES)`);
    this.name = "RefusedAddressError";
  }
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for http.request that refuses private addresses: the check is made on the address
 * the connection will use, at delivery time, so a DNS answer that changes after the destination
 * was saved (rebinding) is caught too.
 */
export function guardedLookup(
  hostname: string,
  options: { all?: boolean; family?: number } | number,
  callback: LookupCallback,
): void {
  const opts = typeof options === "number" ? { family: options } : options;
  dnsLookup(hostname, { ...opts, all: true } as { all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const bad = addresses.find((a) => isPrivateAddress(a.address));
    if (bad) return callback(new RefusedAddressError(hostname), []);
    if (opts.all) return callback(null, addresses);
    const first = addresses[0] as LookupAddress;
    callback(null, first.address, first.family);
  });
}
