import { randomBytes } from "node:crypto";
import pg from "pg";
import { startDelayProxy } from "./delay-proxy.js";

/**
 * A new database beside `url`'s, and how to drop it. With `rttMs` > 0 its url goes through a
 * delaying proxy (delay-proxy.ts: a database that far away); it is created and dropped directly.
 */
export async function freshPostgresDatabase(
  url: string,
  rttMs = 0,
): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `gh_bench_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const dbUrl = new URL(url);
  dbUrl.pathname = `/${name}`;
  const proxy =
    rttMs > 0
      ? await startDelayProxy({ host: dbUrl.hostname, port: Number(dbUrl.port || 5432) }, rttMs / 2)
      : null;
  if (proxy) {
    dbUrl.hostname = "127.0.0.1";
    dbUrl.port = String(proxy.port);
  }
  return {
    url: dbUrl.toString(),
    drop: async () => {
      await proxy?.close();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}
