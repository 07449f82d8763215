import { describe, expect, it } from "vitest";
import { SWEEP_SHARE, sweepDelayMs } from "../../src/broadcast/delivery/broadcaster.js";

/**
 * The Broadcast worker's whole-queue sweeps (queue caps, releasing batches) cost what the queue
 * holds; they back off so that they never take more than SWEEP_SHARE of the store's time.
 */
describe("the whole-queue sweep's interval", () => {
  it("is a second while sweeps are cheap, and grows with a slow sweep to keep its share", () => {
    expect(sweepDelayMs(0)).toBe(1_000);
    expect(sweepDelayMs(5)).toBe(1_000);
    expect(sweepDelayMs(20)).toBe(2_000);
    expect(sweepDelayMs(300)).toBe(30_000);
    for (const took of [11, 50, 275, 9_200]) expect(took / sweepDelayMs(took)).toBeCloseTo(SWEEP_SHARE, 12);
  });
});
