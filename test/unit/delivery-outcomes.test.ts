import { describe, expect, it } from "vitest";
import type { SendResult } from "../../src/broadcast/delivery/http-send.js";
import {
  decideOutcomes,
  LEASE_RAN_OUT,
  NOT_SENT,
  tallyRequests,
  type Failure,
  type Fate,
  type OutcomeInput,
  type RequestResult,
} from "../../src/broadcast/delivery/outcomes.js";
import type { ClaimedDelivery } from "../../src/broadcast/outbox/claims-repo.js";

/**
 * The outcomes stage of a delivery (src/broadcast/delivery/outcomes.ts) is pure: given a claim's
 * rows and what became of each request, it decides per generation (delivered, retried at a time,
 * dead, released) and what the destination's error and circuit breaker see. No database.
 */
const NOW = 1_000_000;
const POLICY = { maxAttempts: 5, maxAgeMs: 86_400_000, retryBaseMs: 1_000, retryMaxMs: 60_000 };

const answer = (status: number | null, extra: Partial<SendResult> = {}): SendResult => ({
  status,
  retryAfterMs: null,
  text: "",
  latencyMs: 1,
  refused: false,
  ...extra,
});
const refused = answer(null, { refused: true, text: "refused address" });
const row = (id: number, ids: string[], attempts = 0, createdAtMs = NOW - 1_000): ClaimedDelivery => ({
  id,
  batchSeq: 1,
  ids,
  attempts,
  createdAtMs,
});
const describeFailure = (r: SendResult) => `status ${r.status ?? "none"}`;

function decide(
  rows: ClaimedDelivery[],
  carried: string[][],
  results: RequestResult[],
  extra: Partial<OutcomeInput> = {},
) {
  return decideOutcomes({
    rows,
    tally: tallyRequests(carried, results, describeFailure),
    failure: null,
    createdAt: new Map(),
    nowMs: NOW,
    policy: POLICY,
    stopping: false,
    random: () => 0.5,
    ...extra,
  });
}

/** Each part's generation ids and its fate's kind. */
const fates = (o: ReturnType<typeof decide>) =>
  o.rows.flatMap((r) => r.parts.map((p) => [p.ids.join(","), p.fate.kind]));
const fateOf = (o: ReturnType<typeof decide>, i = 0): Fate => o.rows[0]!.parts[i]!.fate;

describe("delivery outcomes", () => {
  const one = [row(1, ["a", "b"])];
  const all = [["a", "b"]];

  it.each([
    [200, "delivered", { kind: "success" }],
    [204, "delivered", { kind: "success" }],
    [401, "dead", { kind: "failure", holdUntilMs: null }],
    [403, "dead", { kind: "failure", holdUntilMs: null }],
    [404, "dead", { kind: "failure", holdUntilMs: null }],
    [413, "dead", { kind: "failure", holdUntilMs: null }],
    [500, "retry", { kind: "failure", holdUntilMs: null }],
    [503, "retry", { kind: "failure", holdUntilMs: null }],
    [429, "retry", { kind: "failure", holdUntilMs: null }],
    [408, "retry", { kind: "failure", holdUntilMs: null }],
    [null, "retry", { kind: "failure", holdUntilMs: null }],
  ] as const)("one request answered %s: %s", (status, kind, breaker) => {
    const o = decide(one, all, [answer(status)]);
    expect(fates(o)).toEqual([["a,b", kind]]);
    expect(o.breaker).toEqual(breaker);
    expect(o.anyDead).toBe(kind === "dead");
    expect(o.destinationError).toBe(kind === "delivered" ? null : `status ${status ?? "none"}`);
  });

  it("a retry waits a full-jitter backoff of its attempt", () => {
    const o = decide([row(1, ["a"], 2)], [["a"]], [answer(503)]);
    // Third attempt: ceiling min(60 s, 1 s * 2^2) = 4 s, half of it with random 0.5.
    expect(fateOf(o)).toEqual({ kind: "retry", atMs: NOW + 2_000, error: "status 503" });
  });

  it("a Retry-After is honoured by the rows and holds the destination", () => {
    const o = decide(one, all, [answer(429, { retryAfterMs: 30_000 })]);
    expect(fateOf(o)).toEqual({ kind: "retry", atMs: NOW + 30_000, error: "status 429" });
    expect(o.breaker).toEqual({ kind: "failure", holdUntilMs: NOW + 30_000 });
  });

  it("a refused address dead-letters the claim and is no retry", () => {
    const o = decide(one, all, [refused]);
    expect(fates(o)).toEqual([["a,b", "dead"]]);
    expect(o.breaker).toEqual({ kind: "failure", holdUntilMs: null });
    expect(o.anyDead).toBe(true);
  });

  it("attempts exhausted: a retryable failure is dead", () => {
    expect(fateOf(decide([row(1, ["a"], POLICY.maxAttempts - 1)], [["a"]], [answer(500)])).kind).toBe("dead");
    expect(fateOf(decide([row(1, ["a"], POLICY.maxAttempts - 2)], [["a"]], [answer(500)])).kind).toBe(
      "retry",
    );
  });

  it("too old: a retryable failure is dead", () => {
    const old = [row(1, ["a"], 0, NOW - POLICY.maxAgeMs)];
    expect(fateOf(decide(old, [["a"]], [answer(500)])).kind).toBe("dead");
  });

  it("a partial batch: one body refused, the others delivered, the row split per outcome", () => {
    const rows = [row(1, ["a", "b", "c"])];
    const createdAt = new Map([
      ["a", 10],
      ["b", 20],
      ["c", 30],
    ]);
    const o = decide(rows, [["a"], ["b"], ["c"]], [answer(200), answer(413), answer(200)], { createdAt });
    expect(o.rows[0]!.parts.map((p) => [p.ids, p.fate.kind, p.minCreatedMs, p.maxCreatedMs])).toEqual([
      [["a", "c"], "delivered", 10, 30],
      [["b"], "dead", 20, 20],
    ]);
    // The receiver took some bodies: it is up.
    expect(o.breaker).toEqual({ kind: "success" });
    expect(o.destinationError).toBe("status 413");
  });

  it("a partial batch: a retryable failure stops the claim, what follows is retried", () => {
    const o = decide(
      [row(1, ["a", "b", "c"])],
      [["a"], ["b"], ["c"]],
      [answer(200), answer(503), "not sent"],
    );
    expect(fates(o)).toEqual([
      ["a", "delivered"],
      ["b,c", "retry"],
    ]);
    expect(o.breaker).toEqual({ kind: "failure", holdUntilMs: null });
  });

  it("a request that also carries a refused generation is not sent; its others are retried", () => {
    const t = tallyRequests([["a"], ["a", "b"]], [answer(422), "not sent"], describeFailure);
    expect(t.failed.get("a")?.retry).toBe(false);
    expect(t.failed.get("b")).toBe(NOT_SENT);
    expect(t.stop).toBeNull();
  });

  it("the lease running out stops the claim: the rest is retried", () => {
    const t = tallyRequests(
      [["a"], ["b"], ["c"]],
      [answer(200), "lease ran out", "not sent"],
      describeFailure,
    );
    expect(t.stop).toBe(LEASE_RAN_OUT);
    const o = decide(
      [row(1, ["a", "b", "c"])],
      [["a"], ["b"], ["c"]],
      [answer(200), "lease ran out", "not sent"],
    );
    expect(fates(o)).toEqual([
      ["a", "delivered"],
      ["b,c", "retry"],
    ]);
  });

  it("a failure before any request (outbox, encoder) fails the whole claim", () => {
    const failure: Failure = { text: "encode: boom", retry: false, retryAfterMs: null };
    const o = decide([row(1, ["a"]), row(2, ["b"])], [], [], { failure });
    expect(fates(o)).toEqual([
      ["a", "dead"],
      ["b", "dead"],
    ]);
    expect(o.destinationError).toBe("encode: boom");
    expect(o.breaker).toEqual({ kind: "failure", holdUntilMs: null });
  });

  it("stopping: what is to be retried is released, and neither error nor breaker is told", () => {
    const o = decide(one, all, [answer(503)], { stopping: true });
    expect(fates(o)).toEqual([["a,b", "released"]]);
    expect(o.destinationError).toBeNull();
    expect(o.breaker).toEqual({ kind: "none" });
  });

  it("every row delivered across several rows and requests", () => {
    const o = decide([row(1, ["a"]), row(2, ["b"])], [["a", "b"]], [answer(202)]);
    expect(fates(o)).toEqual([
      ["a", "delivered"],
      ["b", "delivered"],
    ]);
    expect(o.anyDead).toBe(false);
  });
});
