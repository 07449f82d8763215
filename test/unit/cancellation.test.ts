import { describe, expect, it } from "vitest";
import { Cancellation, type CancelSignal } from "../../src/gateway/cancellation.js";

describe("a model request's cancellation", () => {
  it("runs each listener once, on the first abort, and says it is aborted", () => {
    const c = new Cancellation();
    const calls: string[] = [];
    c.addEventListener("abort", () => calls.push("a"), { once: true });
    c.addEventListener("abort", () => calls.push("b"));
    expect(c.aborted).toBe(false);
    c.abort();
    c.abort();
    expect(c.aborted).toBe(true);
    expect(calls).toEqual(["a", "b"]);
  });

  it("never runs a removed listener, one added twice runs once, one added after the abort never", () => {
    const c = new Cancellation();
    const calls: string[] = [];
    const removed = () => calls.push("removed");
    const twice = () => calls.push("twice");
    c.addEventListener("abort", removed);
    c.addEventListener("abort", twice);
    c.addEventListener("abort", twice);
    c.removeEventListener("abort", removed);
    c.removeEventListener("abort", () => calls.push("never added"));
    c.abort();
    c.addEventListener("abort", () => calls.push("late"));
    expect(calls).toEqual(["twice"]);
  });

  it("runs every listener even when one throws, then throws the first error", () => {
    const c = new Cancellation();
    const calls: string[] = [];
    c.addEventListener("abort", () => {
      throw new Error("first");
    });
    c.addEventListener("abort", () => {
      throw new Error("second");
    });
    c.addEventListener("abort", () => calls.push("ran"));
    expect(() => c.abort()).toThrow("first");
    expect(calls).toEqual(["ran"]);
  });

  it("behaves as an AbortSignal for what the data plane uses of one", () => {
    const check = (signal: CancelSignal, abort: () => void) => {
      const seen: number[] = [];
      const l1 = () => seen.push(1);
      const l2 = () => seen.push(2);
      signal.addEventListener("abort", l1, { once: true });
      signal.addEventListener("abort", l2);
      signal.removeEventListener("abort", l2);
      const before = signal.aborted;
      abort();
      abort();
      signal.addEventListener("abort", () => seen.push(3));
      return { before, after: signal.aborted, seen };
    };
    const ac = new AbortController();
    const c = new Cancellation();
    expect(check(c, () => c.abort())).toEqual(check(ac.signal, () => ac.abort()));
  });
});
