/**
 * A model request's cancellation as the data plane uses it: made, listened on by the upstream
 * call (added, then removed when the answer ends), checked a few times, never aborted (nearly
 * every request). Node's AbortController and AbortSignal (an EventTarget; the baseline: what the
 * gateway used up to this bench's commit) against src/gateway/cancellation.ts, in the same run,
 * alternating. Printed: µs per request of each, and the ratio.
 *
 *   npx tsx bench/cancellation.ts [--requests 300000] [--rounds 4]
 */
import { numberOption } from "./lib/args.js";
import { median } from "./lib/stats.js";
import { Cancellation, type CancelSignal } from "../src/gateway/cancellation.js";

const opt = numberOption(process.argv.slice(2));
const REQUESTS = opt("requests", 300_000);
const ROUNDS = opt("rounds", 4);

let sink = 0;
const onAbort = (): void => {
  sink++;
};
/** What one request does with its cancellation (chat route, adapters, upstream-http.ts). */
function request(signal: CancelSignal): void {
  if (signal.aborted) return;
  signal.addEventListener("abort", onAbort, { once: true });
  if (!signal.aborted) sink += 1;
  signal.removeEventListener("abort", onAbort);
  if (!signal.aborted) sink += 1;
}

const kinds = {
  AbortController: () => request(new AbortController().signal),
  Cancellation: () => request(new Cancellation()),
};
type Kind = keyof typeof kinds;

function run(kind: Kind, n: number): number {
  const once = kinds[kind];
  const t0 = performance.now();
  for (let i = 0; i < n; i++) once();
  return ((performance.now() - t0) * 1000) / n;
}

const times: Record<Kind, number[]> = { AbortController: [], Cancellation: [] };
run("AbortController", REQUESTS / 4);
run("Cancellation", REQUESTS / 4);
for (let r = 0; r < ROUNDS; r++) {
  const order: Kind[] =
    r % 2 === 0 ? ["AbortController", "Cancellation"] : ["Cancellation", "AbortController"];
  for (const k of order) times[k].push(run(k, REQUESTS));
}
const [a, b] = [median(times.AbortController), median(times.Cancellation)];
console.log(
  `per request: AbortController + signal ${a.toFixed(2)} µs, Cancellation ${b.toFixed(2)} µs (${((100 * b) / a).toFixed(1)} %)`,
);
if (sink < 0) console.log(sink);
