import { connect, createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

/**
 * A TCP proxy on 127.0.0.1 that holds every chunk `oneWayMs` before passing it on, both ways: a
 * database "across a network" with a round trip of twice that, for benches of statements whose
 * cost is round trips (a local socket's are ~50 µs and hide them). Timers have a 1 ms grain, so
 * the smallest round trip it adds is 2 ms. Chunks keep their order (timers of one delay fire in
 * the order they were set).
 */
export async function startDelayProxy(
  target: { host: string; port: number },
  oneWayMs: number,
): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const relay = (from: Socket, to: Socket): void => {
    from.on("data", (chunk: Buffer) => {
      setTimeout(() => {
        if (!to.destroyed) to.write(chunk);
      }, oneWayMs);
    });
    from.on("end", () => setTimeout(() => to.end(), oneWayMs));
    from.on("error", () => to.destroy());
    from.on("close", () => setTimeout(() => to.destroy(), oneWayMs));
  };
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    for (const s of [client, upstream]) {
      s.setNoDelay(true);
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
    }
    relay(client, upstream);
    relay(upstream, client);
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((done) => {
        for (const s of sockets) s.destroy();
        server.close(() => done());
      }),
  };
}
