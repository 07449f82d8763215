import { afterAll, describe, expect, it } from "vitest";
import { hashKey } from "../../src/lib/ids.js";
import { TestReceiver, waitFor } from "../helpers/broadcast-receiver.js";
import { killAll } from "../helpers/child-server.js";
import { anHourAgo, crashableServer } from "../helpers/crash-restart.js";
import { wireGeneration } from "../helpers/wire-generations.js";

/**
 * Broadcast across a crash: the real server (dist/src/main.js) delivers to a local
 * OTLP receiver that answers slowly, is killed with SIGKILL in the middle of delivery, and is
 * started again on the same data directory. Every generation it accepted arrives at least once.
 */
afterAll(killAll);

/** Fast delivery retries, so the test runs in seconds. */
const FAST_DELIVERY = {
  BROADCAST_POLL_MS: "20",
  BROADCAST_RETRY_BASE_MS: "10",
  BROADCAST_RETRY_MAX_MS: "100",
  BROADCAST_ATTEMPT_TIMEOUT_MS: "500",
};

describe("Broadcast survives SIGKILL mid-delivery", () => {
  it("every accepted generation arrives at least once after a kill and a restart", async () => {
    const crashable = crashableServer(FAST_DELIVERY);
    const { key } = crashable;
    const rx = new TestReceiver();
    rx.okDelayMs = 100; // slow receiver: the kill lands while batches are in flight
    await rx.start();
    try {
      let s = await crashable.start();
      const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
      const created = await fetch(`${s.base}/observability/destinations`, {
        method: "POST",
        headers,
        body: JSON.stringify({ type: "webhook", name: "crash", config: { url: rx.url } }),
      });
      expect(created.status).toBe(201);
      const createdAt = anHourAgo();
      const ids: string[] = [];
      for (let b = 0; b < 4; b++) {
        const batch = Array.from({ length: 500 }, (_, i) => {
          const id = `crash-bc-${b}-${i}`;
          ids.push(id);
          return wireGeneration({
            id,
            created_at: createdAt,
            api_key_hash: hashKey(key),
            usage: 0.0001,
            latency_ms: 50,
          });
        });
        const res = await fetch(`${s.base}/activity/generations`, {
          method: "POST",
          headers,
          body: JSON.stringify({ generations: batch }),
        });
        expect(res.status).toBe(200);
      }
      await waitFor(() => rx.delivered.size > 0, 20_000, "delivery to start");
      await crashable.kill(s);
      const before = rx.delivered.size;
      expect(before).toBeLessThan(ids.length); // killed mid-delivery
      s = await crashable.start();
      await waitFor(() => ids.every((id) => rx.delivered.has(id)), 60_000, "every generation delivered");
      expect(ids.filter((id) => !rx.delivered.has(id))).toEqual([]);
      await crashable.stop(s);
    } finally {
      await rx.stop();
    }
  }, 120_000);
});
