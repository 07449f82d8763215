import type { Command } from "commander";
import { createReadStream, createWriteStream, type WriteStream } from "node:fs";
import { stat } from "node:fs/promises";
import { once } from "node:events";
import { MAX_RECORDS } from "../../domain/ingest/records/validate-generations.js";
import { systemClock } from "../../lib/clock.js";
import type { CliIo } from "../cli-io.js";
import { describeLines, importLines, type ImportSummary } from "../import/import-lines.js";
import { ndjsonLines } from "../import/ndjson-lines.js";
import { httpSink, storeSink, type BatchSink } from "../import/sinks.js";
import { startProgress } from "../progress.js";
import { parseServerUrl, serverKey } from "../server-url.js";
import { UsageError } from "../usage-error.js";
import { parseIntOption, resolveOrganization, withStores } from "../with-all-stores.js";

/** A line longer than this is invalid (a valid record is a few KiB at most). */
export const MAX_LINE_CHARS = 1024 * 1024;
/** Cut a batch before its NDJSON body could pass the server's 32 MiB request limit. */
const MAX_BATCH_CHARS = 8 * 1024 * 1024;
const SHOWN_PROBLEMS = 20;

/** The import stopped at an invalid batch: exit code 1 after the summary. */
export class ImportStopped extends Error {
  override readonly name = "ImportStopped";
}

interface ImportOpts {
  org?: string;
  batch: string;
  skipInvalid?: boolean;
  rejects?: string;
  url?: string;
  key?: string;
  json?: boolean;
  broadcast?: boolean;
}

const fmt = (n: number) => n.toLocaleString("en-US");

/**
 * `gatehouse import FILE`: loads an NDJSON file of generation records (docs/generation-record.md)
 * through the ingest path, in batches that are each all or nothing and idempotent by id. By default
 * into the stores of this installation; with --url/--key through a running server instead (a
 * DuckDB file can be opened by one process only).
 */
export function registerImport(program: Command, io: CliIo): void {
  program
    .command("import")
    .description("load generation records from an NDJSON file (`-` reads standard input)")
    .argument("<file>", "NDJSON file, one generation record per line (docs/generation-record.md)")
    .option("--org <id>", "organization to import into (default: the first organization)")
    .option("--batch <n>", `records per batch, each stored all or nothing (1 to ${MAX_RECORDS})`, "1000")
    .option(
      "--skip-invalid",
      "skip invalid records and import the rest (default: stop at the first invalid batch)",
    )
    .option("--rejects <file>", "with --skip-invalid: write the skipped lines to this file")
    .option("--url <url>", "import through a running server (http://host:port) instead of opening the stores")
    .option("--key <key>", "management key for --url (default: $GATEHOUSE_KEY)")
    .option("--json", "print the summary as one JSON object")
    .option("--broadcast", "offer the records to the observability destinations (default: not broadcast)")
    .action(async (file: string, opts: ImportOpts) => {
      const batchSize = parseIntOption("--batch", opts.batch, 1, MAX_RECORDS);
      if (opts.rejects !== undefined && !opts.skipInvalid) {
        throw new UsageError("--rejects: only with --skip-invalid");
      }
      if (opts.rejects === "") {
        throw new UsageError("--rejects: must name a file");
      }
      let key = "";
      if (opts.url !== undefined) {
        if (opts.org !== undefined) {
          throw new UsageError(
            "--org: not with --url (records go to the organization of the management key)",
          );
        }
        key = serverKey(opts.key, io.env);
        parseServerUrl(opts.url);
      } else if (opts.key !== undefined) {
        throw new UsageError("--key: only with --url");
      }

      // The input first: a missing file is reported before any store is opened.
      let size: number | null = null;
      if (file !== "-") {
        const st = await stat(file).catch((err: NodeJS.ErrnoException) => {
          throw new Error(`cannot read ${file}: ${err.code === "ENOENT" ? "no such file" : err.message}`);
        });
        if (!st.isFile()) throw new Error(`cannot read ${file}: not a regular file`);
        size = st.size;
      } else if (!io.stdin) {
        throw new UsageError("FILE: `-` needs standard input");
      }

      const run = async (sink: BatchSink, target: string) => {
        const fileStream = file === "-" ? null : createReadStream(file, { highWaterMark: 256 * 1024 });
        const input = fileStream ?? (io.stdin as AsyncIterable<Buffer>);
        const rejects = opts.rejects ? await openRejects(opts.rejects) : null;
        const progress = startProgress(io, { label: "import", total: size });
        const started = Date.now();
        let summary: ImportSummary;
        try {
          summary = await importLines(ndjsonLines(input, MAX_LINE_CHARS), sink, {
            batchSize,
            maxBatchChars: MAX_BATCH_CHARS,
            maxLineChars: MAX_LINE_CHARS,
            skipInvalid: Boolean(opts.skipInvalid),
            maxProblems: SHOWN_PROBLEMS,
            onProgress: (bytes, records) => progress.update(bytes, records),
            onRejected: rejects ? (_line, raw) => rejects.write(raw) : undefined,
          });
        } finally {
          progress.stop();
          fileStream?.destroy();
          await rejects?.close();
        }
        report(io, file, target, summary, (Date.now() - started) / 1000, opts);
      };

      if (opts.url !== undefined) {
        await run(httpSink({ url: opts.url, key, broadcast: Boolean(opts.broadcast) }), opts.url);
        return;
      }
      await withStores(
        io,
        "Import through the running server instead: gatehouse import FILE --url http://HOST:PORT --key MANAGEMENT_KEY",
        async ({ store, activity, accepted }) => {
          const org = await resolveOrganization(store, opts.org);
          await run(
            storeSink({ store, activity, clock: systemClock, accepted }, org.id, Boolean(opts.broadcast)),
            `organization ${org.name} (${org.id})`,
          );
        },
      );
    });
}

/** Skipped lines, written as they come (with backpressure), one per line. */
async function openRejects(
  path: string,
): Promise<{ write(raw: string | null): Promise<void>; close(): Promise<void> }> {
  const out: WriteStream = createWriteStream(path, { flags: "w" });
  await once(out, "open");
  return {
    write: async (raw) => {
      if (raw === null) return;
      if (!out.write(raw + "\n")) await once(out, "drain");
    },
    close: () =>
      new Promise<void>((done, fail) => out.end((err?: Error | null) => (err ? fail(err) : done()))),
  };
}

function report(
  io: CliIo,
  file: string,
  target: string,
  s: ImportSummary,
  seconds: number,
  opts: ImportOpts,
): void {
  const handled = s.accepted + s.duplicates;
  const rate = seconds > 0 ? handled / seconds : handled;
  if (opts.json) {
    io.out(
      JSON.stringify({
        file,
        target,
        lines: s.lines,
        records: s.records,
        accepted: s.accepted,
        duplicates: s.duplicates,
        rejected: s.rejected,
        problem_count: s.problemCount,
        problems: s.problems,
        stopped_at: s.stoppedAt && {
          first_line: s.stoppedAt.firstLine,
          last_line: s.stoppedAt.lastLine,
          invalid_lines: s.stoppedAt.invalidLines,
          invalid_count: s.stoppedAt.invalidCount,
        },
        seconds: Math.round(seconds * 1000) / 1000,
        records_per_second: Math.round(rate),
      }) + "\n",
    );
  } else {
    const rows: [string, string][] = [
      ["records", `${fmt(s.records)} (${fmt(s.lines)} lines)`],
      ["accepted", fmt(s.accepted)],
      ["duplicates", `${fmt(s.duplicates)}${s.duplicates > 0 ? " (already imported: skipped)" : ""}`],
      [s.stoppedAt ? "not imported" : "rejected", fmt(s.rejected)],
      ["time", `${seconds.toFixed(1)} s (${fmt(Math.round(rate))} records/s)`],
    ];
    io.out(
      [
        `${s.stoppedAt ? "Import stopped" : "Imported"}: ${file} → ${target}`,
        ...rows.map(([k, v]) => `  ${`${k}:`.padEnd(14)}${v}`),
        "",
      ].join("\n"),
    );
  }
  if (s.problemCount > 0) {
    const shown = s.problems.length < s.problemCount ? ` (first ${s.problems.length})` : "";
    io.err(
      [
        s.stoppedAt
          ? `gatehouse: invalid records in the batch of lines ${s.stoppedAt.firstLine}-${s.stoppedAt.lastLine}; nothing of that batch was stored. Problems${shown}:`
          : `gatehouse: ${fmt(s.rejected)} invalid records skipped. Problems${shown}:`,
        ...s.problems.map((p) => `  ${p}`),
        "",
      ].join("\n"),
    );
  }
  if (s.stoppedAt) {
    const { invalidLines, invalidCount, firstLine, lastLine } = s.stoppedAt;
    const where =
      invalidLines.length > 0
        ? `at invalid line${invalidCount > 1 ? "s" : ""} ${describeLines(invalidLines, invalidCount)}`
        : `at the batch of lines ${firstLine}-${lastLine}`;
    throw new ImportStopped(
      `import stopped ${where} after ${fmt(s.accepted)} accepted records. Fix the lines ` +
        "and run the same command again (records already imported count as duplicates), or pass --skip-invalid " +
        "to import the valid records and report the others.",
    );
  }
}
