import { describe, expect, it } from "vitest";
import { CircuitBreaker } from "../../src/broadcast/delivery/backoff.js";

describe("CircuitBreaker (Broadcast, per destination)", () => {
  it("opens after `threshold` failures in a row, half-opens after the cooldown, closes on a success", () => {
    const b = new CircuitBreaker(3, 1_000);
    b.failure("d", 0);
    b.failure("d", 10);
    expect(b.state("d", 20)).toBe("closed");
    b.failure("d", 20);
    expect(b.state("d", 30)).toBe("open");
    expect(b.allows("d", 30)).toBe(false);
    expect(b.state("d", 1_020)).toBe("half_open");
    expect(b.allows("d", 1_020)).toBe(true);
    b.success("d");
    expect(b.state("d", 1_030)).toBe("closed");
    expect(b.size).toBe(0);
  });

  it("prune forgets destinations that have not failed for staleMs and are not open (a deleted destination leaves nothing)", () => {
    const b = new CircuitBreaker(2, 1_000, 60_000);
    b.failure("quiet", 0); // one failure, then nothing (deleted, or healthy with no traffic)
    b.failure("open", 0);
    b.failure("open", 59_500); // opens until 60,500
    b.failure("recent", 30_000);
    b.prune(60_000);
    expect(b.size).toBe(2); // "quiet" is gone
    expect(b.state("open", 60_000)).toBe("open"); // never dropped while open
    b.prune(60_600);
    expect(b.size).toBe(2); // "open" failed 1.1 s ago, "recent" 30.6 s ago: both kept
    b.prune(120_000);
    expect(b.size).toBe(0);
    // A forgotten destination starts over: one failure does not open it.
    b.failure("open", 120_000);
    expect(b.state("open", 120_001)).toBe("closed");
  });

  it("staleMs defaults to ten cooldowns, at least ten minutes", () => {
    const b = new CircuitBreaker(5, 1_000);
    b.failure("d", 0);
    b.prune(599_999);
    expect(b.size).toBe(1);
    b.prune(600_000);
    expect(b.size).toBe(0);
  });
});
