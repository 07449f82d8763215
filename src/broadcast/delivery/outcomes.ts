import type { ClaimedDelivery } from "../outbox/claims-repo.js";
import { backoffMs } from "./backoff.js";
import { retryable, succeeded, type SendResult } from "./http-send.js";

/**
 * The outcomes stage of a delivery (claim → encode → send → outcomes → settle): pure, no database,
 * no clock, no network. Each generation's outcome follows the requests that carry it
 * (EncodedRequest.generationIds): a body the receiver refuses (413, 400, 422) dead-letters its
 * own generations and the other bodies are still sent; a retryable failure (or the lease running
 * out) stops the claim and what was not delivered yet is retried; any other refusal (401, 403,
 * 404, a refused address) stops it too and dead-letters the rest, as it would refuse them as
 * well. What the receiver accepted is delivered, whatever follows.
 */

/** What went wrong with a claim's request (or before it was sent). */
export interface Failure {
  text: string;
  retry: boolean;
  retryAfterMs: number | null;
}

/** What became of one request: the receiver's answer, or why it was not sent. */
export type RequestResult = SendResult | "lease ran out" | "not sent";

/**
 * A refusal of one body rather than of the destination: too large, or a payload the receiver
 * cannot take. The other bodies of the claim are still sent. Any other refusal (401, 403, 404,
 * a redirect, a refused address) would refuse them too.
 */
export const refusesBody = (r: SendResult): boolean =>
  r.status === 400 || r.status === 413 || r.status === 422;

/** A request left unsent because a generation it also carried was refused. */
export const NOT_SENT: Failure = {
  text: "not sent: the request also carried a generation the receiver refused",
  retry: true,
  retryAfterMs: null,
};

export const LEASE_RAN_OUT: Failure = {
  text: "lease ran out before every request was sent",
  retry: true,
  retryAfterMs: null,
};

/** Where a claim's requests stand, request after request (tallyRequest). */
export interface Tally {
  /** Generation id → why it was not delivered (absent: delivered). A refusal beats a retry. */
  readonly failed: Map<string, Failure>;
  /** What stopped the claim: the requests after it are not sent. */
  stop: Failure | null;
  /** Requests the receiver accepted. */
  accepted: number;
}

export const newTally = (): Tally => ({ failed: new Map(), stop: null, accepted: 0 });

function fail(failed: Map<string, Failure>, id: string, f: Failure): void {
  const current = failed.get(id);
  if (current === undefined || (current.retry && !f.retry)) failed.set(id, f);
}

/** Whether the next request, carrying `carried`, is worth sending given what came before. */
export const shouldSend = (t: Tally, carried: readonly string[]): boolean =>
  t.stop === null && !carried.some((id) => t.failed.get(id)?.retry === false);

/**
 * Adds one request's result to the tally. `describe` turns a failed answer into its error text
 * (failureText with the claim's masking).
 */
export function tallyRequest(
  t: Tally,
  carried: readonly string[],
  result: RequestResult,
  describe: (r: SendResult) => string,
): void {
  if (result === "lease ran out" && t.stop === null) t.stop = LEASE_RAN_OUT;
  if (result === "lease ran out" || result === "not sent") {
    // A step that also needs a refused generation: the others are retried without it.
    const why = t.stop ?? NOT_SENT;
    for (const id of carried) fail(t.failed, id, why);
    return;
  }
  if (succeeded(result)) {
    t.accepted++;
    return;
  }
  const f: Failure = { text: describe(result), retry: retryable(result), retryAfterMs: result.retryAfterMs };
  for (const id of carried) fail(t.failed, id, f);
  if (f.retry || !refusesBody(result)) t.stop = f;
}

/** The tally of a whole claim's requests (each one's carried generation ids and its result). */
export function tallyRequests(
  carried: readonly (readonly string[])[],
  results: readonly RequestResult[],
  describe: (r: SendResult) => string,
): Tally {
  const t = newTally();
  carried.forEach((ids, i) => tallyRequest(t, ids, results[i] ?? "not sent", describe));
  return t;
}

/** Retry rules of the destination's queue (BroadcastConfig). */
export interface RetryPolicy {
  maxAttempts: number;
  maxAgeMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
}

/** What becomes of some generations of a claimed row. */
export type Fate =
  | { kind: "delivered" }
  /** Stopping: given back untouched (the attempt does not count). */
  | { kind: "released" }
  | { kind: "retry"; atMs: number; error: string }
  | { kind: "dead"; error: string };

/** Generations of one claimed row that share a fate. */
export interface Part {
  ids: string[];
  minCreatedMs: number;
  maxCreatedMs: number;
  fate: Fate;
}

/** What the circuit breaker sees of the claim. */
export type BreakerVerdict =
  { kind: "none" } | { kind: "success" } | { kind: "failure"; holdUntilMs: number | null };

export interface Outcomes {
  /** Per claimed row, in claim order: one part, or one per fate (the row is then split). */
  rows: { row: ClaimedDelivery; parts: Part[] }[];
  /** The error recorded on the destination (null: none). */
  destinationError: string | null;
  breaker: BreakerVerdict;
  /** Something was dead-lettered: the claim's batches may be released. */
  anyDead: boolean;
}

export interface OutcomeInput {
  rows: readonly ClaimedDelivery[];
  /** The requests' tally (tallyRequests); empty when nothing was sent. */
  tally: Tally;
  /** A failure before any request (the outbox unreadable, the encoder threw): the whole claim. */
  failure: Failure | null;
  /** Generation id → when it was accepted (the parts' ages when a row is split). */
  createdAt: ReadonlyMap<string, number>;
  nowMs: number;
  policy: RetryPolicy;
  /** The worker is stopping: what is to be retried is released instead. */
  stopping: boolean;
  random?: () => number;
}

/**
 * Decides per generation of a claim: delivered, retried at a time (full-jitter backoff, at least
 * a Retry-After), dead (a refusal, attempts or age exhausted), or released (stopping), and what
 * the destination's error and circuit breaker see.
 */
export function decideOutcomes(input: OutcomeInput): Outcomes {
  const { tally, failure } = input;
  const failed = new Map(tally.failed);
  if (failure !== null) for (const c of input.rows) for (const id of c.ids) fail(failed, id, failure);
  if (failed.size === 0) {
    const rows = input.rows.map((row) => ({ row, parts: [wholeRow(row, { kind: "delivered" })] }));
    return { rows, destinationError: null, breaker: { kind: "success" }, anyDead: false };
  }
  let anyDead = false;
  const rows = input.rows.map((row) => {
    const parts = partsOf(row, failed, input.createdAt).map(({ ids, failure: f, times }) => {
      const fate = fateOf(row, f, input);
      anyDead ||= fate.kind === "dead";
      return { ids, minCreatedMs: times.min, maxCreatedMs: times.max, fate };
    });
    return { row, parts: parts.length > 0 ? parts : [wholeRow(row, { kind: "delivered" })] };
  });
  const shown = tally.stop ?? failure ?? [...failed.values()][0];
  if (shown === undefined || (input.stopping && shown.retry)) {
    return { rows, destinationError: null, breaker: { kind: "none" }, anyDead };
  }
  // A receiver that took some bodies and refused one (too large) is up: that is no failed send.
  const failedSend = tally.stop !== null || failure !== null || tally.accepted === 0;
  // A Retry-After speaks for the receiver, not for these rows: the destination waits it out.
  const after = tally.stop?.retryAfterMs;
  const breaker: BreakerVerdict = failedSend
    ? { kind: "failure", holdUntilMs: after != null ? input.nowMs + after : null }
    : { kind: "success" };
  return { rows, destinationError: shown.text, breaker, anyDead };
}

const wholeRow = (row: ClaimedDelivery, fate: Fate): Part => ({
  ids: row.ids,
  minCreatedMs: row.createdAtMs,
  maxCreatedMs: row.createdAtMs,
  fate,
});

/** A row's generation ids grouped by failure (null: delivered), in first-seen order. */
function partsOf(
  row: ClaimedDelivery,
  failed: ReadonlyMap<string, Failure>,
  createdAt: ReadonlyMap<string, number>,
): { ids: string[]; failure: Failure | null; times: { min: number; max: number } }[] {
  const groups = new Map<Failure | null, string[]>();
  for (const id of row.ids) {
    const f = failed.get(id) ?? null;
    const list = groups.get(f) ?? [];
    list.push(id);
    groups.set(f, list);
  }
  return [...groups.entries()].map(([f, ids]) => {
    const times = ids.map((id) => createdAt.get(id)).filter((t): t is number => t !== undefined);
    const min = times.length > 0 ? Math.min(...times) : row.createdAtMs;
    const max = times.length > 0 ? Math.max(...times) : row.createdAtMs;
    return { ids, failure: f, times: { min, max } };
  });
}

function fateOf(row: ClaimedDelivery, f: Failure | null, input: OutcomeInput): Fate {
  if (f === null) return { kind: "delivered" };
  if (f.retry && input.stopping) return { kind: "released" };
  const { policy, nowMs } = input;
  const attempts = row.attempts + 1;
  const dead = !f.retry || attempts >= policy.maxAttempts || nowMs - row.createdAtMs >= policy.maxAgeMs;
  const wait = backoffMs(attempts, policy.retryBaseMs, policy.retryMaxMs, f.retryAfterMs, input.random);
  return dead ? { kind: "dead", error: f.text } : { kind: "retry", atMs: nowMs + wait, error: f.text };
}
