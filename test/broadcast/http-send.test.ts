import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { IDLE_SOCKET_MS, sendRequest } from "../../src/broadcast/delivery/http-send.js";
import { makeOutboundPolicy } from "../../src/lib/outbound-policy.js";
import { isPrivateAddress } from "../../src/lib/special-addresses.js";

/**
 * Broadcast's HTTP sender keeps connections to a receiver alive between batches, and closes an
 * idle one itself: after IDLE_SOCKET_MS, or sooner when the receiver's Keep-Alive hint says it
 * closes first. The receivers here keep idle connections for a minute, so any close seen is the
 * sender's.
 */
interface Receiver {
  server: Server;
  url: string;
  connections: number;
  /** When each connection was closed by the sender (ms after the test's start). */
  closedAt: number[];
}

async function receiver(hint: string | null, answerAfterMs = 0): Promise<Receiver> {
  const started = performance.now();
  const r: Receiver = { server: createServer(), url: "", connections: 0, closedAt: [] };
  r.server.keepAliveTimeout = 60_000;
  r.server.on("connection", (socket: Socket) => {
    r.connections++;
    socket.on("end", () => r.closedAt.push(performance.now() - started));
  });
  r.server.on("request", (req, res) => {
    req.resume();
    req.on("end", () =>
      setTimeout(() => {
        if (hint !== null) res.setHeader("keep-alive", hint);
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      }, answerAfterMs),
    );
  });
  await new Promise<void>((done) => r.server.listen(0, "127.0.0.1", done));
  r.url = `http://127.0.0.1:${(r.server.address() as AddressInfo).port}/v1/traces`;
  return r;
}

const send = (url: string, timeoutMs = 5_000) =>
  sendRequest(
    { method: "POST", url, headers: { "content-type": "application/json" }, body: "{}" },
    { timeoutMs, addresses: makeOutboundPolicy(false, []) },
  );

const until = async (cond: () => boolean, ms: number) => {
  const end = performance.now() + ms;
  while (!cond() && performance.now() < end) await new Promise((d) => setTimeout(d, 50));
};

describe("Broadcast HTTP sender: keep-alive connections", () => {
  let open: Receiver | null = null;
  afterEach(async () => {
    open?.server.closeAllConnections();
    await new Promise((done) => open?.server.close(done));
    open = null;
  });

  it("reuses one connection for consecutive batches, and closes it after the receiver's Keep-Alive hint (minus 1 s)", async () => {
    open = await receiver("timeout=2");
    for (let i = 0; i < 3; i++) expect((await send(open.url)).status).toBe(200);
    expect(open.connections).toBe(1);
    const sentAt = performance.now();
    await until(() => open!.closedAt.length > 0, 4_000);
    expect(open.closedAt).toHaveLength(1);
    const idle = performance.now() - sentAt;
    expect(idle).toBeGreaterThan(700);
    expect(idle).toBeLessThan(IDLE_SOCKET_MS);
  });

  it(`closes an idle connection after IDLE_SOCKET_MS (${IDLE_SOCKET_MS} ms) when the receiver keeps it longer`, async () => {
    open = await receiver(null); // Node's own hint: timeout=60
    expect((await send(open.url)).status).toBe(200);
    await until(() => open!.closedAt.length > 0, IDLE_SOCKET_MS + 3_000);
    expect(open.closedAt).toHaveLength(1);
    // A new batch after the close opens a new connection and is delivered.
    expect((await send(open.url)).status).toBe(200);
    expect(open.connections).toBe(2);
  }, 15_000);

  it("does not cut a receiver that answers after longer than IDLE_SOCKET_MS (only the attempt's own limit does)", async () => {
    open = await receiver(null, IDLE_SOCKET_MS + 500);
    const r = await send(open.url, IDLE_SOCKET_MS + 3_000);
    expect(r.status).toBe(200);
    expect(r.latencyMs).toBeGreaterThan(IDLE_SOCKET_MS);
  }, 15_000);
});

describe("Broadcast HTTP sender: private addresses (BROADCAST_REFUSE_PRIVATE_ADDRESSES)", () => {
  const guarded = (url: string) =>
    sendRequest(
      { method: "POST", url, headers: { "content-type": "application/json" }, body: "{}" },
      { timeoutMs: 2_000, addresses: makeOutboundPolicy(true, []) },
    );

  it("refuses the IPv6 forms that carry a private IPv4 address, before connecting", async () => {
    for (const host of [
      "[::ffff:127.0.0.1]", // IPv4-mapped (the URL keeps it as ::ffff:7f00:1)
      "[::127.0.0.1]", // IPv4-compatible
      "[64:ff9b::10.0.0.1]", // NAT64: a gateway translates it to 10.0.0.1
      "[64:ff9b::169.254.169.254]", // NAT64 to the cloud metadata address
      "[64:ff9b:1::a00:1]", // local-use NAT64
      "[2002:c0a8:101::1]", // 6to4 of 192.168.1.1
      "[fe80::1]",
      "127.0.0.1",
    ]) {
      const r = await guarded(`http://${host}:9/v1/traces`);
      expect(r, host).toMatchObject({ status: null, refused: true });
      expect(r.text).toMatch(/private address/);
    }
  });

  it("public IPv6 forms of public IPv4 addresses are not refused by the check", () => {
    // The pure check only: nothing is sent to a public address from a test.
    for (const host of ["64:ff9b::8.8.8.8", "2002:808:808::1"])
      expect(isPrivateAddress(host), host).toBe(false);
  });
});
