import { UnparsableLine } from "../../domain/ingest/records/validate-generations.js";
import type { LineChunk } from "./ndjson-lines.js";
import { BatchRejected, SinkFailure, type BatchItem, type BatchSink } from "./sinks.js";

export interface ImportOptions {
  /** Records per batch (1..10,000): each batch is ingested all or nothing. */
  batchSize: number;
  /** A batch is also cut once its raw text reaches this many characters (request body limits). */
  maxBatchChars: number;
  /** Longest line accepted (longer lines are invalid and never buffered whole). */
  maxLineChars: number;
  /** false: stop at the first batch with an invalid record; true: skip invalid records and go on. */
  skipInvalid: boolean;
  /** Problems kept for the summary (all are counted). */
  maxProblems: number;
  onProgress?: (bytes: number, records: number) => void;
  /** Each skipped line (its text; null for a line too long to keep). */
  onRejected?: (line: number, raw: string | null) => Promise<void> | void;
}

export interface ImportSummary {
  /** Lines read (blank ones included). */
  lines: number;
  /** Non-blank lines: the records offered. */
  records: number;
  accepted: number;
  duplicates: number;
  /** Lines not imported because they were invalid (skipped, or of the batch that stopped the import). */
  rejected: number;
  /** The first problems, `line 12: tokens_prompt: must be an integer >= 0`. */
  problems: string[];
  problemCount: number;
  /**
   * Set when the import stopped at an invalid batch: its line range (nothing of it was stored), the
   * invalid lines the answer named (ascending) and how many records were invalid in all (more than
   * named when the answer lists only the first ones).
   */
  stoppedAt: { firstLine: number; lastLine: number; invalidLines: number[]; invalidCount: number } | null;
}

/** Line numbers as ranges, ascending: `3-9`, `12, 15-16`; at most `max` ranges, then `and N more`. */
export function describeLines(lines: readonly number[], total = lines.length, max = 10): string {
  const sorted = [...new Set(lines)].sort((a, b) => a - b);
  const ranges: [number, number][] = [];
  for (const n of sorted) {
    const last = ranges[ranges.length - 1];
    if (last && n === last[1] + 1) last[1] = n;
    else ranges.push([n, n]);
  }
  const shown = ranges.slice(0, max);
  const listed = shown.reduce((sum, [a, b]) => sum + b - a + 1, 0);
  const text = shown.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(", ");
  const more = Math.max(0, total - listed);
  return more > 0 ? `${text} and ${more.toLocaleString("en-US")} more` : text;
}

const JSON_LINE_SUFFIX = / \(line \d+\)$/;

/**
 * Reads NDJSON lines and ingests them in batches through the sink, one batch at a time (a batch
 * is read only after the previous one was stored: memory is bounded by one batch whatever the
 * size of the input). A batch is all or nothing. With skipInvalid, the records a rejected batch
 * names as invalid are dropped and the rest of the batch is submitted again (a rejected batch
 * stored nothing, so this never double-counts); without it the import stops at that batch and
 * reports its problems with line numbers. Re-running an import is safe: ids already stored count
 * as duplicates.
 */
export async function importLines(
  chunks: AsyncIterable<LineChunk>,
  sink: BatchSink,
  opts: ImportOptions,
): Promise<ImportSummary> {
  const summary: ImportSummary = {
    lines: 0,
    records: 0,
    accepted: 0,
    duplicates: 0,
    rejected: 0,
    problems: [],
    problemCount: 0,
    stoppedAt: null,
  };
  let batch: BatchItem[] = [];
  let batchChars = 0;
  /** Lines of the current batch too long to keep (problems found before submitting). */
  let tooLong: number[] = [];
  let firstLine = 0;
  let bytes = 0;

  const problem = (line: number, message: string) => {
    summary.problemCount += 1;
    if (summary.problems.length < opts.maxProblems) summary.problems.push(`line ${line}: ${message}`);
  };
  const progress = () => opts.onProgress?.(bytes, summary.accepted + summary.duplicates);

  /** Submits the current batch; returns false when the import must stop. */
  async function flush(lastLine: number): Promise<boolean> {
    let items = batch;
    const longLines = tooLong;
    batch = [];
    batchChars = 0;
    tooLong = [];
    for (const line of longLines)
      problem(line, `longer than ${opts.maxLineChars.toLocaleString("en-US")} characters`);
    if (longLines.length > 0 && !opts.skipInvalid) {
      summary.rejected += longLines.length + items.length;
      summary.stoppedAt = { firstLine, lastLine, invalidLines: longLines, invalidCount: longLines.length };
      return false;
    }
    for (const line of longLines) {
      summary.rejected += 1;
      await opts.onRejected?.(line, null);
    }
    while (items.length > 0) {
      try {
        const r = await sink.submit(items);
        summary.accepted += r.accepted;
        summary.duplicates += r.duplicates;
        break;
      } catch (err) {
        if (!(err instanceof BatchRejected)) throw err;
        const bad = new Set<number>();
        for (const p of err.problems) {
          if (p.index === null || p.index >= items.length) {
            throw new SinkFailure(`lines ${firstLine}-${lastLine}: ${p.message}`);
          }
          bad.add(p.index);
          problem((items[p.index] as BatchItem).line, p.message.replace(JSON_LINE_SUFFIX, ""));
        }
        // Problems past the listed ones: when skipping, the retry lists them; when stopping, count them.
        if (!opts.skipInvalid) summary.problemCount += Math.max(0, err.total - err.problems.length);
        if (!opts.skipInvalid || bad.size === 0) {
          summary.rejected += items.length;
          const invalidLines = [...bad].map((i) => (items[i] as BatchItem).line).sort((a, b) => a - b);
          summary.stoppedAt = {
            firstLine,
            lastLine,
            invalidLines,
            invalidCount: Math.max(bad.size, err.total),
          };
          return false;
        }
        const keep: BatchItem[] = [];
        for (let i = 0; i < items.length; i++) {
          const item = items[i] as BatchItem;
          if (bad.has(i)) {
            summary.rejected += 1;
            await opts.onRejected?.(item.line, item.raw);
          } else keep.push(item);
        }
        items = keep;
      }
    }
    progress();
    return true;
  }

  let lastLine = 0;
  for await (const chunk of chunks) {
    bytes = chunk.bytes;
    for (const { line, text } of chunk.lines) {
      summary.lines += 1;
      lastLine = line;
      if (text === null) {
        summary.records += 1;
        if (batch.length === 0 && tooLong.length === 0) firstLine = line;
        tooLong.push(line);
        continue;
      }
      const raw = text.trim();
      if (raw === "") continue;
      summary.records += 1;
      if (batch.length === 0 && tooLong.length === 0) firstLine = line;
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch {
        value = new UnparsableLine(line);
      }
      batch.push({ line, raw, value });
      batchChars += raw.length;
      if (batch.length >= opts.batchSize || batchChars >= opts.maxBatchChars) {
        if (!(await flush(line))) return summary;
      }
    }
    progress();
  }
  if (batch.length > 0 || tooLong.length > 0) await flush(lastLine);
  progress();
  return summary;
}
