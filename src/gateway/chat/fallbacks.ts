import type { ChatRequestBody } from "../providers/provider.js";
import { UpstreamError } from "../providers/provider.js";
import type { HoldHandle } from "../reservations/hold.js";
import type { Attempt } from "./attempts.js";
import { upstreamFailure, type ChatRun } from "./serve.js";

/** The attempt that started answering, with what it started with. */
export interface Started<T> {
  a: Attempt;
  /** Its place in the attempt list. */
  n: number;
  hold: HoldHandle;
  /** performance.now() when its upstream call began. */
  t0: number;
  /** What `open` resolved to: a whole answer, or a stream's first chunk. */
  started: T;
}

/** The request stopped (`stopped`) before an attempt started, after this failure (null: none). */
export interface Stopped {
  stoppedAfter: UpstreamError | null;
}

/**
 * The one fallback loop, for both answer kinds (complete.ts, stream.ts) and every API surface:
 * the run's attempts in order, each reserved first (ChatRun.hold); `open` makes the attempt's
 * upstream call and resolves once the answer has started (a whole answer, or a stream's first
 * chunk); nothing has reached the client before then. A failure there finishes the attempt's hold
 * (released, or charged the prompt when the provider had it: ChatRun.attemptFailed), and the next
 * attempt runs when the failure is retryable and the client is still there (ChatRun.mayTryNext).
 * `stopped` is checked before each attempt: a client gone or a shutdown before anything was sent
 * stops the request there, nothing forwarded, nothing charged. Resolves to the attempt that
 * started, its hold still open for the caller to settle, or to Stopped; throws the HTTP error
 * of the last failure when no attempt is left.
 */
export async function firstStarted<T>(
  run: ChatRun,
  stopped: () => boolean,
  streamed: boolean,
  open: (a: Attempt, body: ChatRequestBody) => Promise<T>,
): Promise<Started<T> | Stopped> {
  let lastError: UpstreamError | null = null;
  for (const [n, a] of run.attempts.entries()) {
    if (stopped()) return { stoppedAfter: lastError };
    const { hold, body } = await run.hold(a, n);
    const t0 = performance.now();
    try {
      const started = await open(a, body);
      run.noteAttempt(a, 200, performance.now() - t0);
      return { a, n, hold, t0, started };
    } catch (err) {
      lastError = await run.attemptFailed(a, n, hold, err, performance.now() - t0, streamed);
      if (!run.mayTryNext(lastError)) break;
    }
  }
  throw upstreamFailure(lastError);
}
