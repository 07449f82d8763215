import { liveDestinationsOf } from "../../domain/destinations/destination-repo.js";
import { keyNamesByHashes } from "../../domain/keys/key-repo.js";
import { activityDefaultWorkspaceId } from "../../domain/workspaces/workspace-repo.js";
import type { RecordStore, Db } from "../../stores/record-store.js";
import type { Candidate } from "../broadcast-generation.js";
import type { LiveContext } from "../live-context.js";
import { rowsOfPayload, type OutboxRow } from "../payload-rows.js";
import { ruleOf, selects, type DestinationRule } from "../selection.js";
import {
  deleteOutboxBatches,
  markOutboxBatchesFannedOut,
  waitingOutboxBatches,
  type WaitingOutboxBatch,
} from "./batches-repo.js";

const INSERT_CHUNK = 200;
const LOOKUP_CHUNK = 1_000;

/** Names of the organization's keys among the hashes (deleted keys too). */
export async function keyNames(
  db: Db,
  organizationId: string,
  hashes: readonly string[],
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (let i = 0; i < hashes.length; i += LOOKUP_CHUNK) {
    const rows = await keyNamesByHashes(db, organizationId, hashes.slice(i, i + LOOKUP_CHUNK));
    for (const r of rows) out.set(r.hash, r.name);
  }
  return out;
}

async function defaultWorkspaceOf(db: Db, organizationId: string): Promise<string | null> {
  return activityDefaultWorkspaceId(db, organizationId);
}

export interface FanOutOptions {
  nowMs: number;
  /** Ids per delivery row for a destination type (its encoder's batch limit). */
  chunkOf(type: string): number;
  /** Batches per transaction at most. */
  maxBatches: number;
  /**
   * BROADCAST_LINGER_MS: a delivery's `created_at_ms` is its batch's acceptance time, but no
   * earlier than this before `nowMs` (so a batch that already lingered before its fan-out is ripe
   * at once, and the age limit still counts from about the fan-out). 0: `nowMs`.
   */
  lingerMs?: number;
  /** Receives each batch's decoded rows and contexts (the delivery worker keeps them to send). */
  decoded?(
    seq: number,
    rows: readonly OutboxRow[],
    contexts: Record<string, LiveContext>,
    size: number,
  ): void;
}

/** A delivery to write: one destination, one batch, up to its chunk size of generation ids. */
interface NewDelivery {
  destination_id: string;
  organization_id: string;
  batch_seq: number;
  ids: string;
  item_count: number;
  min_created_ms: number;
  max_created_ms: number;
  state: string;
  attempts: number;
  created_at_ms: number;
  next_attempt_ms: number;
}

/**
 * Turns outbox batches into deliveries, in one transaction per call: for each batch, each
 * destination it names (enabled at acceptance, or the one a replay names) that still exists takes the generations it selects
 * (selection.ts), in delivery rows of at most its encoder's batch size. A batch nobody selected
 * from is deleted at once; the others stay (they hold the content) until no delivery of theirs is
 * pending. Several instances may call this together: batches are locked with SKIP LOCKED on
 * PostgreSQL (SQLite runs one transaction at a time). Resolves to the number of batches handled.
 */
export async function fanOutOnce(store: RecordStore, opts: FanOutOptions): Promise<number> {
  return store.transaction(async (trx) => {
    const batches = await waitingOutboxBatches(trx, opts.maxBatches, store.caps.supportsForUpdate);
    if (batches.length === 0) return 0;
    const byOrg = await rulesByOrganization(trx, [...new Set(batches.map((b) => b.organization_id))]);
    const { decodedRows, namesOf } = await decodeOffered(trx, batches, byOrg);
    const out: NewDelivery[] = [];
    const empty: number[] = [];
    for (const b of batches) {
      const seq = Number(b.seq);
      const offered = new Set(JSON.parse(b.destination_ids) as string[]);
      const rules = (byOrg.get(b.organization_id) ?? []).filter((r) => offered.has(r.id));
      if (rules.length === 0) {
        empty.push(seq);
        continue;
      }
      const rows = decodedRows.get(seq) as OutboxRow[];
      const contexts = b.contexts === null ? {} : (JSON.parse(b.contexts) as Record<string, LiveContext>);
      opts.decoded?.(seq, rows, contexts, b.payload.length + (b.contexts?.length ?? 0));
      const names = namesOf.get(b.organization_id) as Map<string, string>;
      const legacy = rows.some((r) => r.workspace_id === null)
        ? await defaultWorkspaceOf(trx, b.organization_id)
        : null;
      const candidates: Selectable[] = rows.map((row) => ({
        c: { row, context: contexts[row.id] ?? null, apiKeyName: names.get(row.api_key_hash) ?? null },
        workspace: row.workspace_id ?? legacy,
      }));
      const linger = opts.lingerMs ?? 0;
      const base = {
        organization_id: b.organization_id,
        batch_seq: seq,
        state: "pending",
        attempts: 0,
        created_at_ms: Math.min(opts.nowMs, Math.max(Number(b.created_at_ms), opts.nowMs - linger)),
        next_attempt_ms: opts.nowMs,
      };
      const made = rules.flatMap((rule) => deliveriesOf(rule, candidates, base, opts.chunkOf(rule.type)));
      out.push(...made);
      if (made.length === 0) empty.push(seq);
    }
    await writeFanOut(
      trx,
      out,
      empty,
      batches.map((b) => Number(b.seq)),
    );
    return batches.length;
  });
}

/** A generation of a batch and the workspace its selection filters see. */
interface Selectable {
  c: Candidate;
  workspace: string | null;
}

/** The live destinations of these organizations, as selection rules, by organization. */
async function rulesByOrganization(db: Db, orgs: readonly string[]): Promise<Map<string, DestinationRule[]>> {
  const byOrg = new Map<string, DestinationRule[]>();
  for (const d of await liveDestinationsOf(db, orgs)) {
    const list = byOrg.get(d.organization_id) ?? [];
    // Offered while enabled (the batch names it): paused since, its queue waits.
    list.push({ ...ruleOf(d), enabled: true });
    byOrg.set(d.organization_id, list);
  }
  return byOrg;
}

/**
 * The rows of every batch offered to a live destination, and the key names of each organization's
 * batches in one lookup (the batches of a lingered pass are many and small: one lookup each was a
 * statement per recorder flush).
 */
async function decodeOffered(
  db: Db,
  batches: readonly WaitingOutboxBatch[],
  byOrg: ReadonlyMap<string, DestinationRule[]>,
): Promise<{ decodedRows: Map<number, OutboxRow[]>; namesOf: Map<string, Map<string, string>> }> {
  const decodedRows = new Map<number, OutboxRow[]>();
  const hashesOf = new Map<string, Set<string>>();
  for (const b of batches) {
    const offered = new Set(JSON.parse(b.destination_ids) as string[]);
    if (!(byOrg.get(b.organization_id) ?? []).some((r) => offered.has(r.id))) continue;
    const rows = rowsOfPayload(b.payload);
    decodedRows.set(Number(b.seq), rows);
    const set = hashesOf.get(b.organization_id) ?? new Set<string>();
    for (const r of rows) set.add(r.api_key_hash);
    hashesOf.set(b.organization_id, set);
  }
  const namesOf = new Map<string, Map<string, string>>();
  for (const [org, hashes] of hashesOf) namesOf.set(org, await keyNames(db, org, [...hashes]));
  return { decodedRows, namesOf };
}

/** The delivery rows of one destination for one batch: the generations it selects, in chunks. */
function deliveriesOf(
  rule: DestinationRule,
  candidates: readonly Selectable[],
  base: Omit<NewDelivery, "destination_id" | "ids" | "item_count" | "min_created_ms" | "max_created_ms">,
  chunkOf: number,
): NewDelivery[] {
  const chunk = Math.max(1, chunkOf);
  const out: NewDelivery[] = [];
  let ids: string[] = [];
  let min = Infinity;
  let max = -Infinity;
  const flush = () => {
    if (ids.length === 0) return;
    out.push({
      ...base,
      destination_id: rule.id,
      ids: JSON.stringify(ids),
      item_count: ids.length,
      min_created_ms: min,
      max_created_ms: max,
    });
    ids = [];
    min = Infinity;
    max = -Infinity;
  };
  for (const { c, workspace } of candidates) {
    if (workspace === null || !selects(rule, c, workspace)) continue;
    ids.push(c.row.id);
    min = Math.min(min, c.row.created_at_ms);
    max = Math.max(max, c.row.created_at_ms);
    if (ids.length >= chunk) flush();
  }
  flush();
  return out;
}

/** Writes the deliveries, deletes the batches nobody selected from and marks the others done. */
async function writeFanOut(
  db: Db,
  out: readonly NewDelivery[],
  empty: readonly number[],
  done: readonly number[],
) {
  for (let i = 0; i < out.length; i += INSERT_CHUNK) {
    await db
      .insertInto("broadcast_deliveries")
      .values(out.slice(i, i + INSERT_CHUNK))
      .execute();
  }
  await deleteOutboxBatches(db, empty);
  await markOutboxBatchesFannedOut(
    db,
    done.filter((s) => !empty.includes(s)),
  );
}
