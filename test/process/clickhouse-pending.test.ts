import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newKeyString } from "../../src/lib/ids.js";
import { http, killAll, startServer, stopServer, type ChildServer } from "../helpers/child-server.js";

/**
 * The composition root's wiring of parked generations (src/main.ts, PendingActivity) in the
 * compiled server: with CLICKHOUSE_URL set, a ClickHouse server whose merges are behind its
 * inserts (TOO_MANY_PARTS) does not fail model requests; their rows are parked in the record
 * store, and the instance's own periodic pass writes them to ClickHouse once it takes inserts
 * again, without a restart.
 *
 * The ClickHouse server is a fake that speaks its HTTP interface: every statement answers 200 with
 * no rows, and while `refusing` every INSERT answers ClickHouse's exception for too many parts
 * (status 500, `X-ClickHouse-Exception-Code`, the `Code: N. DB::Exception: … (NAME)` text). It
 * keeps the bodies of the inserts it accepted.
 */
afterAll(() => killAll());

describe("ClickHouse refusing inserts, then taking them again: a running instance catches up", () => {
  let fake: Server;
  let refusing = true;
  const refused: string[] = [];
  /** Bodies of accepted INSERT … FORMAT JSONEachRow statements, by table. */
  const accepted: { table: string; body: string }[] = [];
  let server: ChildServer;
  let key: string;

  beforeAll(async () => {
    fake = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const query = new URL(req.url ?? "/", "http://x").searchParams.get("query") ?? "";
        const insert = /^INSERT INTO (\w+)/i.exec(query);
        if (insert && refusing) {
          refused.push(insert[1] as string);
          res.writeHead(500, { "X-ClickHouse-Exception-Code": "252" });
          res.end(
            "Code: 252. DB::Exception: Too many parts (3001 with average size of 1.02 KiB) in table " +
              `'default.${insert[1]}'. Merges are processing significantly slower than inserts. ` +
              "(TOO_MANY_PARTS) (version 24.8.4.13 (official build))\n",
          );
          return;
        }
        if (insert)
          accepted.push({ table: insert[1] as string, body: Buffer.concat(chunks).toString("utf8") });
        res.end("");
      });
    });
    await new Promise<void>((r) => fake.listen(0, "127.0.0.1", r));
    const port = (fake.address() as AddressInfo).port;
    const managementKey = newKeyString();
    server = await startServer({
      GATEHOUSE_BOOTSTRAP_KEY: managementKey,
      CLICKHOUSE_URL: `http://127.0.0.1:${port}`,
    });
    const created = await http(`${server.base}/keys`, {
      method: "POST",
      key: managementKey,
      body: { name: "parked" },
    });
    expect(created.status, created.text).toBe(201);
    key = (created.body as { key: string }).key;
  }, 60_000);

  afterAll(async () => {
    if (server) await stopServer(server);
    fake?.closeAllConnections();
    await new Promise<void>((r) => (fake ? fake.close(() => r()) : r()));
  });

  it("serves and charges model requests while inserts are refused, and writes them once they are taken", async () => {
    const ids: string[] = [];
    for (const stream of [false, true]) {
      const r = await http(`${server.base}/chat/completions`, {
        method: "POST",
        key,
        body: { model: "mock/echo", max_tokens: 20, stream, messages: [{ role: "user", content: "hi" }] },
      });
      expect(r.status, r.text).toBe(200);
      const id = stream ? /"id":"(gen-[^"]+)"/.exec(r.text)?.[1] : (r.body as { id: string }).id;
      expect(id).toMatch(/^gen-/);
      ids.push(id as string);
    }
    // The records were committed (the key's usage counts both), and ClickHouse refused their rows.
    const usage = async () =>
      ((await http(`${server.base}/key`, { key })).body as { data: { usage: number } }).data.usage;
    const deadline = Date.now() + 10_000;
    while ((await usage()) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await usage()).toBeGreaterThan(0);
    expect(refused).toContain("generations");
    expect(accepted.filter((a) => a.table === "generations")).toEqual([]);

    // ClickHouse takes inserts again: the instance's pass (every 5 s) writes the parked rows.
    refusing = false;
    const written = () =>
      accepted
        .filter((a) => a.table === "generations")
        .flatMap((a) => a.body.split("\n").filter((l) => l.length > 0))
        .map((l) => (JSON.parse(l) as { id: string }).id);
    const until = Date.now() + 20_000;
    while (!ids.every((id) => written().includes(id)) && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(written()).toEqual(expect.arrayContaining(ids));
    // Each written once: the pass forgets a batch it wrote.
    await new Promise((r) => setTimeout(r, 6_000));
    expect(
      written()
        .filter((id) => ids.includes(id))
        .sort(),
    ).toEqual([...ids].sort());
    expect(server.stdout() + server.stderr()).not.toContain('"level":50');
  }, 60_000);
});
