import type { RecordStore } from "../../stores/record-store.js";
import { toBroadcastGeneration, type GenerationFlags } from "../broadcast-generation.js";
import type { BroadcastGeneration } from "../encoders/encoder.js";
import type { LiveContext } from "../live-context.js";
import { outboxBatchPayloads } from "../outbox/batches-repo.js";
import type { ClaimedDelivery } from "../outbox/claims-repo.js";
import { keyNames } from "../outbox/fan-out.js";
import { rowsOfPayload, type OutboxRow } from "../payload-rows.js";
import type { BatchCache } from "./batch-cache.js";

/** An outbox batch as decoded for sending: its rows by generation id and their live contexts. */
export interface DecodedBatch {
  rows: Map<string, OutboxRow>;
  contexts: Record<string, LiveContext>;
}

/** The batches of these sequence numbers, from the cache or else the outbox (and then cached). */
async function batchesOf(
  store: RecordStore,
  cache: BatchCache<DecodedBatch>,
  seqs: readonly number[],
): Promise<Map<number, DecodedBatch>> {
  // This claim's batches, held here: keeping one in the cache may evict another of them.
  const batches = new Map<number, DecodedBatch>();
  for (const s of seqs) {
    const kept = cache.get(s);
    if (kept !== undefined) batches.set(s, kept);
  }
  const missing = seqs.filter((s) => !batches.has(s));
  if (missing.length === 0) return batches;
  for (const r of await outboxBatchPayloads(store.db, missing)) {
    const batch: DecodedBatch = {
      rows: new Map(rowsOfPayload(r.payload).map((x) => [x.id, x])),
      contexts: r.contexts === null ? {} : (JSON.parse(r.contexts) as Record<string, LiveContext>),
    };
    batches.set(r.seq, batch);
    cache.remember(r.seq, batch, r.payload.length + (r.contexts?.length ?? 0));
  }
  return batches;
}

/** The claimed generations as the destination's flags allow, in claim order. */
export async function loadGenerations(
  store: RecordStore,
  cache: BatchCache<DecodedBatch>,
  organizationId: string,
  claimed: readonly ClaimedDelivery[],
  flags: GenerationFlags,
): Promise<BroadcastGeneration[]> {
  const batches = await batchesOf(store, cache, [...new Set(claimed.map((c) => c.batchSeq))]);
  const picked: { row: OutboxRow; context: LiveContext | null }[] = [];
  for (const c of claimed) {
    const batch = batches.get(c.batchSeq);
    if (batch === undefined) throw new Error(`batch ${c.batchSeq} is gone`);
    for (const id of c.ids) {
      const row = batch.rows.get(id);
      if (row) picked.push({ row, context: batch.contexts[id] ?? null });
    }
  }
  const names = flags.identity
    ? await keyNames(store.db, organizationId, [...new Set(picked.map((p) => p.row.api_key_hash))])
    : new Map<string, string>();
  return picked.map((p) =>
    toBroadcastGeneration(
      { row: p.row, context: p.context, apiKeyName: names.get(p.row.api_key_hash) ?? null },
      flags,
    ),
  );
}
