import { BlockList, isIP } from "node:net";
import { lookup as dnsLookup, type LookupAddress } from "node:dns";

/**
 * Addresses a destination may not resolve to when BROADCAST_REFUSE_PRIVATE_ADDRESSES is on:
 * unspecified, loopback, RFC 1918 private, carrier-grade NAT, link-local (cloud metadata), IPv6
 * unique-local and link-local, and IPv4-mapped forms of those.
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

export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return PRIVATE.check(address, "ipv4");
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped?.[1]) return PRIVATE.check(mapped[1], "ipv4");
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
