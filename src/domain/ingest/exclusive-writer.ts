import { newId } from "../../lib/ids.js";
import type { ExclusiveActivityWriter, StagedActivity } from "../../stores/activity-store.js";
import { mergeEncoded } from "../../stores/column-texts.js";
import type { RecordStore } from "../../stores/record-store.js";
import type { PreparedBatch } from "./batch-preparer.js";
import { addInflight, removeInflight } from "./inflight-repo.js";
import { IngestGate } from "./ingest-gate.js";
import { recordAcceptance } from "./record-acceptance.js";
import type { PreparedRows } from "./prepare-batch.js";
import { recoverInflight } from "./recover-inflight.js";
import { claimGenerationIds } from "./seen-repo.js";

/*
 * The ingest fast path on a single-writer activity store (embedded DuckDB), with group commit.
 *
 * Batches that arrive while the store is busy wait in a queue, and the next group takes all of
 * them (up to GROUP_MAX_ROWS): their rows are staged as ONE activity insert and accepted in ONE
 * record-store transaction. DuckDB's cost per row falls by about a quarter from 1,000 to 2,000
 * rows per transaction (docs/performance.md), and the record store commits once per group. A
 * batch that arrives while fewer than MAX_GROUPS_IN_FLIGHT groups are running starts a group at
 * once, so a lone batch waits for nothing. Each batch still gets its own answer (accepted,
 * duplicates); a store failure fails every batch of its group (each may be retried: ingest is
 * idempotent).
 *
 * The protocol of one group: its rows are staged in an activity transaction of their own before
 * the record-store transaction (so building and appending them is not serialised with other
 * groups), and an in-flight marker per organization naming the staged ids is committed. In ONE
 * record-store transaction: claim the ids; if some were already accepted (or are claimed by an
 * earlier batch of the same group), restage only the new ones; add them to the ledger, labels and
 * activity version; delete the markers; commit the staged activity rows; then the record store
 * commits. No existence check in the activity store is needed: a row can be there without its id
 * accepted only after a group failed between the two commits, and such a group's markers are
 * recovered (their unaccepted rows deleted) before any other group is written (IngestGate).
 */

/** A group stops taking queued batches past this many rows (one batch alone may be larger). */
const GROUP_MAX_ROWS = 20_000;
/** Groups staged or committing at once: one can stage while another commits. */
const MAX_GROUPS_IN_FLIGHT = 2;

interface Pending {
  /** The writer this batch was given (wrappers of one store share its queue, not their writes). */
  writer: ExclusiveActivityWriter;
  organizationId: string;
  batch: PreparedBatch;
  resolve: (accepted: number) => void;
  reject: (err: unknown) => void;
}

const isText = (p: Pending): boolean => !p.batch.encoded.generations.rows && !p.batch.encoded.tags.rows;

/** One store's queue of batches and the groups in flight. */
class GroupQueue {
  private readonly queue: Pending[] = [];
  private inFlight = 0;
  readonly gate = new IngestGate();

  constructor(private readonly store: RecordStore) {}

  submit(writer: ExclusiveActivityWriter, organizationId: string, batch: PreparedBatch): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      this.queue.push({ writer, organizationId, batch, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < MAX_GROUPS_IN_FLIGHT && this.queue.length > 0) {
      const group = this.take();
      this.inFlight += 1;
      void this.run(group).finally(() => {
        this.inFlight -= 1;
        this.pump();
      });
    }
  }

  /**
   * The next group: queued batches in arrival order, up to GROUP_MAX_ROWS rows, given the same
   * writer. A batch that is not in column texts (see mergeEncoded) goes alone.
   */
  private take(): Pending[] {
    const group: Pending[] = [this.queue.shift() as Pending];
    let rows = group[0]?.batch.ids.length ?? 0;
    while (this.queue.length > 0 && isText(group[0] as Pending)) {
      const next = this.queue[0] as Pending;
      if (rows + next.batch.ids.length > GROUP_MAX_ROWS || !isText(next)) break;
      if (next.writer !== group[0]?.writer) break;
      group.push(next);
      this.queue.shift();
      rows += next.batch.ids.length;
    }
    return group;
  }

  private async run(group: Pending[]): Promise<void> {
    try {
      const accepted = await writeGroup(this.store, (group[0] as Pending).writer, this.gate, group);
      group.forEach((p, i) => p.resolve(accepted[i] as number));
    } catch (err) {
      for (const p of group) p.reject(err);
    }
  }
}

/** Ids of each organization in the group, in first-seen order, with their created_at range. */
function byOrganization(
  group: readonly Pending[],
): Map<string, { ids: string[]; minMs: number; maxMs: number }> {
  const out = new Map<string, { ids: string[]; minMs: number; maxMs: number }>();
  for (const { organizationId, batch } of group) {
    const o = out.get(organizationId);
    if (!o) out.set(organizationId, { ids: [...batch.ids], minMs: batch.minMs, maxMs: batch.maxMs });
    else {
      for (const id of batch.ids) o.ids.push(id);
      o.minMs = Math.min(o.minMs, batch.minMs);
      o.maxMs = Math.max(o.maxMs, batch.maxMs);
    }
  }
  return out;
}

/**
 * Writes one group (see the top of this file); returns the number of rows accepted per batch.
 */
async function writeGroup(
  store: RecordStore,
  writer: ExclusiveActivityWriter,
  gate: IngestGate,
  group: readonly Pending[],
): Promise<number[]> {
  await gate.enter(() => recoverInflight(store.db, writer));
  try {
    // Staging runs on the engine's threads while the markers are written (which waits for the
    // record store whenever another group's transaction holds it).
    const staging = writer.stageEncoded(mergeEncoded(group.map((p) => p.batch.encoded)));
    staging.catch(() => undefined); // awaited below; a failure must not go unhandled meanwhile
    let staged: StagedActivity | null = null;
    try {
      const orgs = byOrganization(group);
      const tokens = new Map<string, string>();
      for (const [organizationId, o] of orgs) {
        const token = newId();
        tokens.set(organizationId, token);
        await addInflight(store.db, { token, owner: writer.owner, organizationId, ...o });
      }
      staged = await staging;
      return await gate.commit((beforeActivityCommit) =>
        store.transaction(async (trx) => {
          // Organizations and ids sorted, so that concurrent groups sharing ids lock them in the
          // same order (no deadlock on PostgreSQL).
          const claimed = new Map<string, Set<string>>();
          for (const organizationId of [...orgs.keys()].sort()) {
            const ids = [...new Set((orgs.get(organizationId) as { ids: string[] }).ids)].sort();
            claimed.set(organizationId, await claimGenerationIds(trx, organizationId, ids, store.caps));
            await removeInflight(trx, tokens.get(organizationId) as string);
          }
          // Each claimed id goes to the first batch of the group that holds it.
          const fresh: (PreparedRows | null)[] = [];
          let restage = false;
          for (const { organizationId, batch } of group) {
            const open = claimed.get(organizationId) as Set<string>;
            const mine = new Set<string>();
            for (const id of batch.ids) if (open.delete(id)) mine.add(id);
            if (mine.size === batch.ids.length) fresh.push(batch);
            else {
              restage = true;
              fresh.push(mine.size === 0 ? null : await batch.subset(mine));
            }
          }
          let current = staged as StagedActivity;
          if (restage) {
            await current.abort();
            const kept = fresh.filter((f): f is PreparedRows => f !== null);
            staged = current = await writer.stageEncoded(mergeEncoded(kept.map((f) => f.encoded)));
          }
          const accepted = fresh.map((f) => f?.ids.length ?? 0);
          if (accepted.every((n) => n === 0)) {
            await current.abort();
            return accepted;
          }
          for (let i = 0; i < group.length; i++) {
            const f = fresh[i];
            if (f && f.ids.length > 0) {
              await recordAcceptance(trx, store.caps, (group[i] as Pending).organizationId, f);
            }
          }
          await beforeActivityCommit();
          await current.commit();
          return accepted;
        }),
      );
    } finally {
      // No-op once committed; a group that failed before its staging finished drops it too.
      if (staged) await staged.abort();
      else
        await staging.then(
          (s) => s.abort(),
          () => undefined,
        );
    }
  } finally {
    gate.leave();
  }
}

/**
 * One queue (and gate) per record store and single-writer activity store, the latter keyed by its
 * owner so that wrappers of one store share it; a new session (the store opened again) gets a new
 * one, whose gate recovers first.
 */
const queues = new WeakMap<RecordStore, Map<string, { session: string; queue: GroupQueue }>>();

/** Writes a prepared batch on a single-writer store; resolves to the number of rows accepted. */
export function writeExclusive(
  store: RecordStore,
  writer: ExclusiveActivityWriter,
  organizationId: string,
  batch: PreparedBatch,
): Promise<number> {
  let ofStore = queues.get(store);
  if (!ofStore) queues.set(store, (ofStore = new Map<string, { session: string; queue: GroupQueue }>()));
  let known = ofStore.get(writer.owner);
  if (known?.session !== writer.session) {
    known = { session: writer.session, queue: new GroupQueue(store) };
    ofStore.set(writer.owner, known);
  }
  return known.queue.submit(writer, organizationId, batch);
}
