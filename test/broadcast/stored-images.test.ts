import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { Broadcaster } from "../../src/broadcast/delivery/broadcaster.js";
import { defaultEncoderLookup } from "../../src/broadcast/encoder-lookup.js";
import { systemClock } from "../../src/lib/clock.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";
import { makeTestApp } from "../helpers/app.js";
import { TestReceiver, waitFor } from "../helpers/broadcast-receiver.js";
import { dataUrl, pngBytes } from "../helpers/images.js";
import { createWebhook, testSettings } from "./broadcast-helpers.js";

/**
 * Images are not stored for telemetry (issue 35): requests with 5 MiB images while the only
 * destination is down keep a few KiB each in the outbox (text, and a placeholder per image), not
 * the images; the destination gets the text and the placeholders once it is back.
 */
const MiB = 1024 * 1024;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Every file under `dir`, in bytes (the SQLite file, its WAL and SHM, the recording journal). */
function sizeOf(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    n += e.isDirectory() ? sizeOf(p) : statSync(p).size;
  }
  return n;
}

/** The data directory's size once the WAL is folded into the database file. */
async function settledSize(store: RecordStore, dir: string): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const r = await sql<{ busy: number | bigint }>`PRAGMA wal_checkpoint(TRUNCATE)`.execute(store.db);
    if (Number(r.rows[0]?.busy ?? 0) === 0) break;
    await new Promise((d) => setTimeout(d, 20));
  }
  return sizeOf(dir);
}

describe("images are not stored for Broadcast", () => {
  it("three 5 MiB images while the destination is down: the data directory grows by KiB, not MiB", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gh-images-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const store = await openSqliteStore(join(dir, "gatehouse.sqlite"));
    cleanups.push(() => store.close());
    // Delivery to the loopback receiver is opted in explicitly (private addresses are refused by default).
    const settings = testSettings({ refusePrivateAddresses: false, retryBaseMs: 100, retryMaxMs: 300 });
    const t = await makeTestApp({ store, clock: systemClock, config: { broadcast: settings } });
    const broadcaster = new Broadcaster({
      store,
      secretBox: t.ctx.secretBox,
      clock: systemClock,
      settings,
      encoderFor: defaultEncoderLookup,
      outboxSignal: t.ctx.outboxSignal,
    });
    t.ctx.broadcaster = broadcaster;
    cleanups.push(() => t.close());
    cleanups.push(() => broadcaster.stop());
    const rx = new TestReceiver();
    await rx.start();
    cleanups.push(() => rx.stop());
    await createWebhook(t, rx.url);
    const created = await t.call({ method: "POST", url: "/api/v1/keys", payload: { name: "app" } });
    expect(created.statusCode).toBe(201);
    const key = created.json<{ key: string }>().key;

    rx.fallback = { kind: "status", status: 503 }; // the destination is down
    broadcaster.start();
    const before = await settledSize(store, dir);
    const ids: string[] = [];
    for (let i = 1; i <= 3; i++) {
      const image = dataUrl("image/png", pngBytes(1024, 768, 5 * MiB));
      const res = await t.call({
        method: "POST",
        url: "/api/v1/chat/completions",
        auth: key,
        payload: {
          model: "mock/echo",
          max_tokens: 8,
          messages: [
            {
              role: "user",
              content: [
                { type: "text", text: `describe picture ${i}` },
                { type: "image_url", image_url: { url: image } },
              ],
            },
          ],
        },
      });
      expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
      ids.push(res.json<{ id: string }>().id);
    }
    // Each was offered to the destination, which refused it.
    await waitFor(
      () => ids.every((id) => rx.requests.some((r) => r.status === 503 && r.ids.includes(id))),
      10_000,
      "each generation tried while the destination is down",
    );
    const grown = (await settledSize(store, dir)) - before;
    expect(grown).toBeLessThan(300 * 1024);
    const stored = await sql<{ bytes: number | bigint }>`
      SELECT coalesce(max(length(contexts)), 0) AS bytes FROM broadcast_batches`.execute(store.db);
    expect(Number(stored.rows[0]!.bytes)).toBeLessThan(4096);

    rx.fallback = { kind: "ok" }; // back up
    await waitFor(() => ids.every((id) => rx.delivered.has(id)), 15_000, "the three delivered once back");
    const bodies = rx.requests.filter((r) => r.status === 200).map((r) => r.body);
    const body = bodies.join("\n");
    for (let i = 1; i <= 3; i++) expect(body).toContain(`describe picture ${i}`);
    expect(body).toContain("[image image/png 5.0 MiB]");
    // no image byte reached the destination: not even the PNG signature's base64
    expect(body).not.toContain("iVBORw0KGgo");
    expect(Math.max(...bodies.map((b) => b.length))).toBeLessThan(64 * 1024);
  });
});
