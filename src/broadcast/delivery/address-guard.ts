import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import type { OutboundPolicy } from "../../lib/outbound-policy.js";
import { refusedText } from "../../lib/outbound-policy.js";

/** A destination's host is, or resolves to, an address the policy refuses (never retried). */
export class RefusedAddressError extends Error {
  constructor(host: string) {
    super(refusedText(host));
    this.name = "RefusedAddressError";
  }
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** dns.lookup with `all: true`, as the guard calls it (a parameter so that its answers can be given). */
export type Resolver = (
  hostname: string,
  options: { all: true; family?: number },
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/**
 * A `lookup` for http.request that refuses what the policy refuses: the check is made on the
 * addresses the connection will use, at connect time, so a DNS answer that changes after the
 * destination was saved (rebinding) is caught too. A name with any refused address is refused
 * as a whole (the connection could use any of them). `localhost` names are refused unresolved.
 */
export function guardedLookup(policy: OutboundPolicy, resolve: Resolver = dnsLookup) {
  return (
    hostname: string,
    options: { all?: boolean; family?: number } | number,
    callback: LookupCallback,
  ): void => {
    const opts = typeof options === "number" ? { family: options } : options;
    if (!policy.allowsHost(hostname)) return callback(new RefusedAddressError(hostname), []);
    resolve(hostname, { ...opts, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      if (!policy.trustsName(hostname) && addresses.some((a) => !policy.allowsAddress(a.address))) {
        return callback(new RefusedAddressError(hostname), []);
      }
      if (opts.all) return callback(null, addresses);
      const first = addresses[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}
