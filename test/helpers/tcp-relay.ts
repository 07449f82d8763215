import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";

/**
 * A loopback TCP relay to a server (PostgreSQL, say), whose connections a test can cut at once:
 * what a restart, a failover or a network cut looks like to a client.
 */
export interface TcpRelay {
  /** The relay's port on 127.0.0.1. */
  port: number;
  /** `url` with its host and port replaced by the relay's. */
  urlThrough(url: string): string;
  /** Destroys every relayed connection, both sides; new connections are still relayed. */
  cut(): void;
  /** Cuts every relayed connection and refuses new ones (closes them at once) until up(). */
  down(): void;
  up(): void;
  close(): Promise<void>;
}

export async function startTcpRelay(targetHost: string, targetPort: number): Promise<TcpRelay> {
  const sockets = new Set<Socket>();
  let refusing = false;
  const server: Server = createServer((client) => {
    if (refusing) return void client.destroy();
    const upstream = connect(targetPort, targetHost);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => undefined);
      s.on("close", () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  const cut = (): void => {
    for (const s of sockets) s.destroy();
  };
  return {
    port,
    urlThrough: (url) => {
      const u = new URL(url);
      u.hostname = "127.0.0.1";
      u.port = String(port);
      return u.toString();
    },
    cut,
    down: () => {
      refusing = true;
      cut();
    },
    up: () => {
      refusing = false;
    },
    close: async () => {
      cut();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
