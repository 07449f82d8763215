import { SegmentLog } from "../../stores/segment-log.js";
import {
  recordEach,
  type JournaledGeneration,
  type RecordingDeps,
  type Refused,
} from "./record-generation.js";

/**
 * Segments rotate at 1 MiB (about 1,500 generations): a segment is deleted once all its entries
 * are committed, and after a crash the next start reads the released entries of the segments
 * still there too (duplicates by id), so small segments keep that read short.
 */
const SEGMENT_BYTES = 1024 * 1024;

/**
 * The recording journal: durable recording on a record store owned by this process (SQLite). A
 * finished generation is appended here before its answer is sent, and released once its record is
 * committed; the commit itself is group-committed after the answer (recorder.ts, gathering like
 * deferred recording). So an answered generation survives the process being killed between its
 * answer and its commit: the next start records what the journal still holds before it serves
 * anything (`replay`). Records are idempotent by generation id, so one that was committed but not
 * yet released is a duplicate there, never a second charge.
 *
 * The journal keeps what the record needs, not what Broadcast alone would send: no prompt,
 * completion or request parameters reach the disk. A generation recorded at the next start is
 * offered to Broadcast without them, as an ingested record is.
 *
 * Files: segments named `*.journal` in the journal's directory (src/stores/segment-log.ts); an
 * append is written to the OS before it resolves (it survives a crash of the process; like the
 * SQLite store's own commits, synchronous=NORMAL, not a power loss).
 */
export class RecordingJournal {
  private constructor(private readonly log: SegmentLog) {}

  /** Opens the journal in `dir` (null: in memory, for a store in memory), reading what it holds. */
  static open(dir: string | null): RecordingJournal {
    return new RecordingJournal(
      SegmentLog.open(dir, {
        suffix: ".journal",
        keepAppended: false,
        segmentBytes: SEGMENT_BYTES,
        gatherTurn: true,
      }),
    );
  }

  /** Resolves once the generation is in the journal's file. */
  append(g: JournaledGeneration): Promise<void> {
    return this.log.append(g.id, encodeEntry(g), false);
  }

  /** Forgets generations whose records are committed. */
  release(...generationIds: string[]): void {
    this.log.release(generationIds);
  }

  /** Ids of the generations held: appended and not released, or left by an earlier process. */
  held(): string[] {
    return this.log.tokens();
  }

  /**
   * Records the generations an earlier process journaled and did not release, one batch per
   * organization (idempotent by id: those it did commit are duplicates), then releases them. A
   * record ingest refuses (a DomainError: the record itself is wrong, which no retry can mend) is
   * reported and released; any other failure (the store down) throws and keeps the journal as it
   * is, for the next start.
   */
  async replay(deps: RecordingDeps, refused: Refused): Promise<{ recorded: number; refused: number }> {
    const gs: JournaledGeneration[] = [];
    const unreadable: string[] = [];
    for (const [id, payload] of this.log.held()) {
      const g = decodeEntry(payload);
      if (g === null) {
        unreadable.push(id);
        refused(new Error("journal entry unreadable"), id);
      } else {
        gs.push(g);
      }
    }
    this.log.release(unreadable);
    const done = await recordEach(deps, gs, refused, (ids) => this.log.release(ids));
    return { recorded: done.recorded, refused: done.refused + unreadable.length };
  }

  /** Segment files on disk (tests and operations). */
  files(): string[] {
    return this.log.files();
  }

  close(): Promise<void> {
    return this.log.close();
  }
}

/** What a journal entry holds: the ServedGeneration without its Broadcast-only content. */
type Entry = Omit<
  JournaledGeneration,
  "createdAt" | "costNano" | "byokCostNano" | "cacheCostNano" | "input" | "output" | "params"
> & {
  createdAt: string;
  costNano: string;
  byokCostNano: string;
  /** Absent in entries journaled before cache prices: 0. */
  cacheCostNano?: string;
};

export function encodeEntry(g: JournaledGeneration): string {
  // Every field of the record, named one by one (half the CPU of a rest-spread copy, ~2 µs, and
  // the type makes a field added to ServedGeneration a compile error here); the Broadcast-only
  // content (input, output, params) left out.
  const entry: Entry = {
    id: g.id,
    key: { hash: g.key.hash, organizationId: g.key.organizationId, workspaceId: g.key.workspaceId },
    model: g.model,
    api: g.api,
    provider: g.provider,
    providerName: g.providerName,
    createdAt: g.createdAt.toISOString(),
    appTitle: g.appTitle,
    referer: g.referer,
    externalUser: g.externalUser,
    sessionId: g.sessionId,
    promptTokens: g.promptTokens,
    completionTokens: g.completionTokens,
    cachedTokens: g.cachedTokens,
    reasoningTokens: g.reasoningTokens,
    costNano: g.costNano.toString(),
    byokCostNano: g.byokCostNano.toString(),
    cacheCostNano: g.cacheCostNano.toString(),
    isByok: g.isByok,
    latencyMs: g.latencyMs,
    generationTimeMs: g.generationTimeMs,
    finishReason: g.finishReason,
    streamed: g.streamed,
    cancelled: g.cancelled,
    upstreamId: g.upstreamId,
    attempts: g.attempts,
  };
  return JSON.stringify(entry);
}

/** The generation an entry holds, or null when it is not one (a file damaged by hand). */
export function decodeEntry(payload: string): JournaledGeneration | null {
  let e: Entry;
  try {
    e = JSON.parse(payload) as Entry;
  } catch {
    return null;
  }
  if (typeof e !== "object" || e === null) return null;
  const createdAt = new Date(typeof e.createdAt === "string" ? e.createdAt : NaN);
  if (
    typeof e.id !== "string" ||
    typeof e.key?.hash !== "string" ||
    typeof e.key.organizationId !== "string" ||
    typeof e.key.workspaceId !== "string" ||
    Number.isNaN(createdAt.getTime()) ||
    !/^\d+$/.test(String(e.costNano)) ||
    !/^\d+$/.test(String(e.byokCostNano)) ||
    (e.cacheCostNano !== undefined && !/^\d+$/.test(String(e.cacheCostNano))) ||
    !Array.isArray(e.attempts)
  ) {
    return null;
  }
  return {
    ...e,
    // Entries journaled before the API was kept came from chat completions, the only API then.
    api: typeof e.api === "string" ? e.api : "chat",
    createdAt,
    costNano: BigInt(e.costNano),
    byokCostNano: BigInt(e.byokCostNano),
    cacheCostNano: BigInt(e.cacheCostNano ?? 0),
    input: [],
    output: null,
    params: null,
  };
}
