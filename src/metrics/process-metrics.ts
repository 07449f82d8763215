import { createRequire } from "node:module";
import { collectDefaultMetrics, type Registry } from "prom-client";

const load = createRequire(import.meta.url);

/**
 * prom-client's default collectors left out. `gc` (nodejs_gc_duration_seconds) observes every
 * garbage collection through a PerformanceObserver: at saturation that cost 5-10 % more CPU per
 * model request (docs/performance-history.md "Metrics on the request path"), for a figure a profiler
 * gives better when it is needed.
 */
export const LEFT_OUT_COLLECTORS: readonly string[] = ["gc"];

type Collector = (registry: Registry, config: { eventLoopMonitoringPrecision: number }) => void;

/**
 * Node's process metrics (CPU, memory, heap, event-loop lag, handles, version) under their usual
 * names, into `registry`: prom-client's default collectors, each by the name prom-client itself
 * lists (`collectDefaultMetrics.metricsList`, one module per name, as collectDefaultMetrics
 * loads them), less LEFT_OUT_COLLECTORS. Returns the collectors used.
 */
export function collectProcessMetrics(registry: Registry): string[] {
  const used = collectDefaultMetrics.metricsList.filter((name) => !LEFT_OUT_COLLECTORS.includes(name));
  for (const name of used) {
    (load(`prom-client/lib/metrics/${name}.js`) as Collector)(registry, { eventLoopMonitoringPrecision: 10 });
  }
  return used;
}
