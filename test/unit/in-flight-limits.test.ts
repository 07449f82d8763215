import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { InFlightLimits, workspaceCap } from "../../src/gateway/fair-use/in-flight-limits.js";

/** The limiter of requests in flight (src/gateway/fair-use/in-flight-limits.ts), without a server. */
const refusalOf = (fn: () => unknown): DomainError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error("not refused");
};

const local = { slug: "local", connections: 8 };
const other = { slug: "other", connections: 8 };

describe("InFlightLimits", () => {
  it("a key: at most maxPerKey slots, the next refused 429 naming the limit; a release makes room", () => {
    const limits = new InFlightLimits({ maxPerKey: 2, workspaceSharePct: 100 });
    const a = limits.admit("key-a", "ws");
    const b = limits.admit("key-a", "ws");
    const refused = refusalOf(() => limits.admit("key-a", "ws"));
    expect(refused.status).toBe(429);
    expect(refused.metadata).toEqual({
      limit: "in_flight_per_key",
      max: 2,
      in_flight: 2,
      retry_after_seconds: 1,
    });
    expect(limits.refused).toEqual({ in_flight_per_key: 1, in_flight_per_workspace_provider: 0 });
    // Another key is not concerned.
    limits.admit("key-b", "ws").release();
    a.release();
    expect(limits.ofKey("key-a")).toBe(1);
    limits.admit("key-a", "ws").release();
    b.release();
    expect(limits.ofKey("key-a")).toBe(0);
  });

  it("release gives every slot back once, however many times it is called", () => {
    const limits = new InFlightLimits({ maxPerKey: 3, workspaceSharePct: 100 });
    const slots = limits.admit("key", "ws");
    const kept = limits.admit("key", "ws");
    kept.at(local);
    slots.at(local);
    slots.release();
    slots.release();
    slots.at(other); // after its release: takes nothing
    expect(limits.ofKey("key")).toBe(1);
    expect(limits.ofWorkspace("local", "ws")).toBe(1);
    expect(limits.ofWorkspace("other", "ws")).toBe(0);
    kept.release();
    expect(limits.ofKey("key")).toBe(0);
    expect([...limits.byProvider()]).toEqual([{ provider: "local", inFlight: 0 }]);
  });

  it("maxPerKey 0: no limit on a key", () => {
    const limits = new InFlightLimits({ maxPerKey: 0, workspaceSharePct: 100 });
    for (let i = 0; i < 1_000; i++) limits.admit("key", "ws");
    expect(limits.ofKey("key")).toBe(1_000);
  });

  it("a workspace: at most its share of a provider's connections; other workspaces and providers have room", () => {
    const limits = new InFlightLimits({ maxPerKey: 0, workspaceSharePct: 75 });
    const held = Array.from({ length: 6 }, () => {
      const s = limits.admit("key", "ws-1");
      s.at(local);
      return s;
    });
    const seventh = limits.admit("key", "ws-1");
    const refused = refusalOf(() => seventh.at(local));
    expect(refused.status).toBe(429);
    expect(refused.metadata).toEqual({
      limit: "in_flight_per_workspace_provider",
      provider: "local",
      max: 6,
      in_flight: 6,
      retry_after_seconds: 1,
    });
    expect(limits.refused.in_flight_per_workspace_provider).toBe(1);
    seventh.at(other); // another provider has room
    limits.admit("key-2", "ws-2").at(local); // another workspace too
    expect([...limits.byProvider()]).toEqual([
      { provider: "local", inFlight: 7 },
      { provider: "other", inFlight: 1 },
    ]);
    // Moving to the next attempt's provider gives the previous one's slot back.
    held[0]!.at(other);
    expect(limits.ofWorkspace("local", "ws-1")).toBe(5);
    expect(limits.ofWorkspace("other", "ws-1")).toBe(2);
  });

  it("withRoom skips a provider the workspace has filled while another can serve; keeps all when none can", () => {
    const limits = new InFlightLimits({ maxPerKey: 0, workspaceSharePct: 50 });
    for (let i = 0; i < 4; i++) limits.admit("key", "ws").at(local);
    const attempts = [{ provider: local }, { provider: other }];
    expect(limits.withRoom(attempts, "ws")).toEqual([{ provider: other }]);
    expect(limits.withRoom(attempts, "ws-2")).toBe(attempts);
    const onlyLocal = [{ provider: local }];
    expect(limits.withRoom(onlyLocal, "ws")).toBe(onlyLocal);
  });

  it("workspaceCap: a share of the pool, at least 1; no cap without a pool or at 100 %", () => {
    expect(workspaceCap(128, 75)).toBe(96);
    expect(workspaceCap(undefined, 75)).toBe(96);
    expect(workspaceCap(8, 75)).toBe(6);
    expect(workspaceCap(1, 50)).toBe(1);
    expect(workspaceCap(null, 75)).toBe(Infinity);
    expect(workspaceCap(128, 100)).toBe(Infinity);
  });
});
