import type { BroadcastGeneration } from "./encoder.js";

/**
 * Renders a batch into as few bodies as fit under `maxBytes`: a body that is too large is split
 * in halves until each fits or holds one generation (a single oversized generation is still sent;
 * the destination decides). Deterministic: the same batch always splits the same way.
 */
export function splitBySize(
  batch: readonly BroadcastGeneration[],
  maxBytes: number,
  render: (part: readonly BroadcastGeneration[]) => string,
): { part: readonly BroadcastGeneration[]; body: string }[] {
  if (batch.length === 0) return [];
  const body = render(batch);
  if (batch.length === 1 || Buffer.byteLength(body, "utf8") <= maxBytes) return [{ part: batch, body }];
  const mid = Math.ceil(batch.length / 2);
  return [
    ...splitBySize(batch.slice(0, mid), maxBytes, render),
    ...splitBySize(batch.slice(mid), maxBytes, render),
  ];
}
