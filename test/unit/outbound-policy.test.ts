import type { LookupAddress } from "node:dns";
import { describe, expect, it } from "vitest";
import { guardedLookup, type Resolver } from "../../src/broadcast/delivery/address-guard.js";
import { makeOutboundPolicy, parseAllowedHost } from "../../src/lib/outbound-policy.js";

/** A resolver answering from a table (what a DNS server, or a rebinding one, would say). */
const resolverOf =
  (answers: Record<string, string[]>): Resolver =>
  (hostname, _opts, callback) => {
    const list = answers[hostname];
    if (list === undefined) {
      const err = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
      return callback(err, []);
    }
    callback(
      null,
      list.map((address) => ({ address, family: address.includes(":") ? 6 : 4 })),
    );
  };

const lookupWith = (policy: ReturnType<typeof makeOutboundPolicy>, answers: Record<string, string[]>) => {
  const lookup = guardedLookup(policy, resolverOf(answers));
  return (host: string) =>
    new Promise<{ err: string | null; addresses: LookupAddress[] }>((done) =>
      lookup(host, { all: true }, (err, addresses) =>
        done({ err: err ? err.message : null, addresses: addresses as LookupAddress[] }),
      ),
    );
};

const DNS = {
  "internal.example": ["10.1.2.3"],
  "rebind.example": ["93.184.215.14", "127.0.0.1"],
  "metadata.example": ["169.254.169.254"],
  "v6.example": ["fd00::5"],
  "mapped.example": ["::ffff:127.0.0.1"],
  "public.example": ["93.184.215.14", "2606:4700::1111"],
  "collector.corp": ["10.9.9.9"],
};

describe("guardedLookup: the check on the addresses a connection will use", () => {
  it("by default refuses a name resolving to any private address, and localhost names unresolved", async () => {
    const lookup = lookupWith(makeOutboundPolicy(true, []), DNS);
    for (const host of [
      "internal.example",
      "rebind.example",
      "metadata.example",
      "v6.example",
      "mapped.example",
    ]) {
      const r = await lookup(host);
      expect(r.err, host).toBe(`refused: ${host} is a private address (BROADCAST_REFUSE_PRIVATE_ADDRESSES)`);
      expect(r.addresses).toEqual([]);
    }
    expect((await lookup("LOCALHOST.")).err).toMatch(/^refused: LOCALHOST\. is a private address/);
    expect((await lookup("public.example")).addresses.map((a) => a.address)).toEqual([
      "93.184.215.14",
      "2606:4700::1111",
    ]);
    expect((await lookup("nowhere.example")).err).toContain("ENOTFOUND");
  });

  it("the operator's allowlist: CIDRs allow their addresses, a name allows whatever it resolves to", async () => {
    const lookup = lookupWith(makeOutboundPolicy(true, ["10.0.0.0/16", "Collector.Corp", "fd00::/8"]), DNS);
    expect((await lookup("collector.corp")).err).toBeNull(); // by name
    expect((await lookup("v6.example")).err).toBeNull(); // fd00::/8
    expect((await lookup("internal.example")).err).toMatch(/^refused/); // 10.1.2.3 is outside 10.0/16
    expect((await lookup("rebind.example")).err).toMatch(/^refused/);
  });

  it("BROADCAST_REFUSE_PRIVATE_ADDRESSES=false allows everything", async () => {
    const lookup = lookupWith(makeOutboundPolicy(false, []), DNS);
    for (const host of ["internal.example", "rebind.example", "mapped.example"]) {
      expect((await lookup(host)).err, host).toBeNull();
    }
  });
});

describe("makeOutboundPolicy", () => {
  it("allowsHost: literal addresses by the table and the allowlist; names unless localhost", () => {
    const strict = makeOutboundPolicy(true, []);
    for (const h of ["127.0.0.1", "::ffff:7f00:1", "64:ff9b::7f00:1", "[::1]", "localhost", "a.localhost"]) {
      expect(strict.allowsHost(h), h).toBe(false);
    }
    for (const h of ["8.8.8.8", "2606:4700::1111", "example.com"]) expect(strict.allowsHost(h), h).toBe(true);
    const allowed = makeOutboundPolicy(true, ["127.0.0.1/8", "::1", "localhost"]);
    for (const h of ["127.0.0.1", "127.9.9.9", "::ffff:7f00:1", "::1", "[::1]", "LOCALHOST."]) {
      expect(allowed.allowsHost(h), h).toBe(true);
    }
    expect(allowed.allowsHost("10.0.0.1")).toBe(false);
    expect(allowed.allowsHost("a.localhost")).toBe(false);
  });

  it("an IPv6 allowlist entry does not allow IPv4 addresses", () => {
    const p = makeOutboundPolicy(true, ["::/0"]);
    expect(p.allowsAddress("fd00::1")).toBe(true);
    expect(p.allowsAddress("10.0.0.1")).toBe(false);
  });

  it("parseAllowedHost", () => {
    expect(parseAllowedHost("10.0.0.0/8")).toEqual({
      kind: "net",
      address: "10.0.0.0",
      bits: 8,
      family: "ipv4",
    });
    expect(parseAllowedHost("[fd00::1]")).toEqual({
      kind: "net",
      address: "fd00::1",
      bits: 128,
      family: "ipv6",
    });
    expect(parseAllowedHost("Otel.Corp.")).toEqual({ kind: "name", name: "otel.corp" });
    for (const bad of ["10.0.0.0/33", "10.0.0.0/", "x/8", "http://a", "a b", ""])
      expect(parseAllowedHost(bad), bad).toBeNull();
  });
});
