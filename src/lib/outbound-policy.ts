import { BlockList, isIP } from "node:net";
import { bareAddress, embeddedIpv4, isLocalhostName, isPrivateAddress } from "./special-addresses.js";

/**
 * Which addresses Gatehouse may connect to for a tenant-chosen URL (observability destinations):
 * BROADCAST_REFUSE_PRIVATE_ADDRESSES (default on) refuses every address that is not globally
 * reachable (special-addresses.ts) and `localhost` names; BROADCAST_ALLOWED_PRIVATE_HOSTS lets the
 * operator's own networks and host names through.
 */
export interface OutboundPolicy {
  readonly refusePrivate: boolean;
  /** Whether a connection to this IP address is allowed (the address connected to). */
  allowsAddress(address: string): boolean;
  /**
   * Whether a URL host may be connected to before resolving it: a literal IP address by
   * allowsAddress, a `localhost` name only when allowed by name, any other name yes (its
   * addresses are checked as it resolves, unless trustsName).
   */
  allowsHost(host: string): boolean;
  /** A host whose addresses are not checked: the policy is off, or the operator allowed the name. */
  trustsName(host: string): boolean;
}

/** One allowlist entry: a network (a single IP is a full-length prefix) or an exact host name. */
export type AllowedHost =
  { kind: "net"; address: string; bits: number; family: "ipv4" | "ipv6" } | { kind: "name"; name: string };

const HOST_NAME_RE =
  /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/** A host name as compared: lower case, without the root's trailing dot. */
export const normalHostName = (host: string): string => host.toLowerCase().replace(/\.$/, "");

/** Parses one BROADCAST_ALLOWED_PRIVATE_HOSTS entry (`10.0.0.0/8`, `::1`, `[fd00::1]`, `collector.internal`); null when it is none of these. */
export function parseAllowedHost(entry: string): AllowedHost | null {
  const text = entry.trim();
  const slash = text.indexOf("/");
  const ip = bareAddress(slash === -1 ? text : text.slice(0, slash));
  const family = isIP(ip);
  if (family !== 0) {
    const max = family === 4 ? 32 : 128;
    const bitsText = slash === -1 ? String(max) : text.slice(slash + 1);
    if (!/^\d{1,3}$/.test(bitsText) || Number(bitsText) > max) return null;
    return { kind: "net", address: ip, bits: Number(bitsText), family: family === 4 ? "ipv4" : "ipv6" };
  }
  if (slash !== -1) return null;
  const name = normalHostName(text);
  return HOST_NAME_RE.test(name) ? { kind: "name", name } : null;
}

/** The policy of BroadcastConfig's two settings (entries already validated by config.ts). */
export function makeOutboundPolicy(refusePrivate: boolean, allowed: readonly string[]): OutboundPolicy {
  // One list per family: a BlockList checks IPv4 addresses against IPv6 rules too (::ffff:…).
  const nets = { ipv4: new BlockList(), ipv6: new BlockList() };
  const names = new Set<string>();
  for (const entry of allowed) {
    const a = parseAllowedHost(entry);
    if (a?.kind === "net") nets[a.family].addSubnet(a.address, a.bits, a.family);
    else if (a?.kind === "name") names.add(a.name);
  }
  const inNets = (address: string): boolean => {
    const bare = bareAddress(address);
    const family = isIP(bare);
    if (family === 4) return nets.ipv4.check(bare, "ipv4");
    if (family !== 6) return false;
    if (nets.ipv6.check(bare, "ipv6")) return true;
    const v4 = embeddedIpv4(bare);
    return v4 !== null && nets.ipv4.check(v4, "ipv4");
  };
  const trustsName = (host: string): boolean =>
    !refusePrivate || names.has(normalHostName(bareAddress(host)));
  const allowsAddress = (address: string): boolean =>
    !refusePrivate || !isPrivateAddress(address) || inNets(address);
  return {
    refusePrivate,
    allowsAddress,
    trustsName,
    allowsHost: (host) => {
      if (trustsName(host)) return true;
      if (isIP(bareAddress(host)) !== 0) return allowsAddress(host);
      return !isLocalhostName(host);
    },
  };
}

const policies = new WeakMap<object, OutboundPolicy>();

/** The policy of a BroadcastConfig, made once per (frozen) settings object. */
export function outboundPolicy(settings: {
  refusePrivateAddresses: boolean;
  allowedPrivateHosts: readonly string[];
}): OutboundPolicy {
  let p = policies.get(settings);
  if (p === undefined) {
    p = makeOutboundPolicy(settings.refusePrivateAddresses, settings.allowedPrivateHosts);
    policies.set(settings, p);
  }
  return p;
}

/** The text of a refusal, as the test operation, deliveries and validation show it. */
export const refusedText = (host: string): string =>
  `refused: ${host} is a private address (BROADCAST_REFUSE_PRIVATE_ADDRESSES)`;
