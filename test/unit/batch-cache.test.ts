import { describe, expect, it } from "vitest";
import { BatchCache } from "../../src/broadcast/delivery/batch-cache.js";

/** The delivery worker's decoded outbox batches: bounded in number and in size, oldest out first. */
describe("BatchCache", () => {
  it("keeps at most its number of batches, dropping the oldest", () => {
    const c = new BatchCache<string>(2, 1_000);
    c.remember(1, "a", 10);
    c.remember(2, "b", 10);
    c.remember(3, "c", 10);
    expect([c.has(1), c.get(2), c.get(3)]).toEqual([false, "b", "c"]);
    expect([c.count, c.size]).toEqual([2, 20]);
  });

  it("keeps at most its size, dropping the oldest; a batch larger than the bound is not kept", () => {
    const c = new BatchCache<string>(64, 100);
    c.remember(1, "a", 40);
    c.remember(2, "b", 40);
    c.remember(3, "c", 40); // 120 > 100: the oldest goes
    expect([c.has(1), c.has(2), c.has(3)]).toEqual([false, true, true]);
    expect(c.size).toBe(80);
    c.remember(4, "huge", 101);
    expect(c.has(4)).toBe(false);
    expect(c.size).toBe(80);
    // Remembering a kept batch again replaces it (its size counted once).
    c.remember(3, "c2", 50);
    expect([c.get(3), c.size]).toEqual(["c2", 90]);
  });
});
