import type { BroadcastGeneration } from "./encoder.js";

const byteLength = (body: string | Uint8Array): number =>
  typeof body === "string" ? Buffer.byteLength(body, "utf8") : body.byteLength;

/**
 * Renders a batch into as few bodies as fit under `maxBytes`: a body that is too large is split
 * in halves until each fits or holds one generation (a single oversized generation is still sent;
 * the destination decides). Deterministic: the same batch always splits the same way.
 */
export function splitBySize<Body extends string | Uint8Array>(
  batch: readonly BroadcastGeneration[],
  maxBytes: number,
  render: (part: readonly BroadcastGeneration[]) => Body,
): { part: readonly BroadcastGeneration[]; body: Body }[] {
  if (batch.length === 0) return [];
  const body = render(batch);
  if (batch.length === 1 || byteLength(body) <= maxBytes) return [{ part: batch, body }];
  const mid = Math.ceil(batch.length / 2);
  return [
    ...splitBySize(batch.slice(0, mid), maxBytes, render),
    ...splitBySize(batch.slice(mid), maxBytes, render),
  ];
}
