import { DomainError } from "../../domain/errors.js";
import {
  ingestGenerations,
  type IngestDeps,
  type IngestResult,
} from "../../domain/ingest/ingest-generations.js";
import { notGatehouseAnswer } from "../server-url.js";

/** One record of a batch: its line in the file, the raw text, and the parsed JSON value. */
export interface BatchItem {
  line: number;
  raw: string;
  value: unknown;
}

/** A problem of a rejected batch; index is the record's position in the batch (null: the whole batch). */
export interface BatchProblem {
  index: number | null;
  /** The problem without the `generations[i]` prefix: `tokens_prompt: must be an integer >= 0`. */
  message: string;
}

/** The batch was refused as a whole (all or nothing): nothing of it was stored. */
export class BatchRejected extends Error {
  override readonly name = "BatchRejected";
  constructor(
    readonly problems: BatchProblem[],
    readonly total: number,
  ) {
    super(problems[0]?.message ?? "batch rejected");
  }
}

/** Where batches go: the stores directly, or a running server's ingest endpoint. */
export interface BatchSink {
  submit(items: readonly BatchItem[]): Promise<IngestResult>;
}

const PROBLEM_RE = /^generations\[(\d+)\](?:\.|: )?(.*)$/s;

/** `generations[17].tokens_prompt: msg` → {index 17, "tokens_prompt: msg"}. */
export function parseProblem(text: string): BatchProblem {
  const m = PROBLEM_RE.exec(text);
  if (!m) return { index: null, message: text };
  return { index: Number(m[1]), message: m[2] ?? "" };
}

function rejectedFrom(metadata: Record<string, unknown> | null | undefined, message: string): BatchRejected {
  const raw = metadata?.problems;
  const list = Array.isArray(raw) ? raw.filter((p): p is string => typeof p === "string") : [message];
  const total = typeof metadata?.problem_count === "number" ? metadata.problem_count : list.length;
  return new BatchRejected(list.map(parseProblem), Math.max(total, list.length));
}

/** Ingest through ingestGenerations on the opened stores (the same path as the HTTP endpoint). */
export function storeSink(deps: IngestDeps, organizationId: string, broadcast = false): BatchSink {
  return {
    submit: async (items) => {
      try {
        return await ingestGenerations(
          deps,
          organizationId,
          items.map((i) => i.value),
          { broadcast },
        );
      } catch (err) {
        if (err instanceof DomainError && err.code === "invalid_request") {
          throw rejectedFrom(err.metadata, err.message);
        }
        throw err;
      }
    },
  };
}

/** A failure the importer must not retry (authentication, a refused request). */
export class SinkFailure extends Error {
  override readonly name = "SinkFailure";
}

export interface HttpSinkOptions {
  /** `http://host:port` or `http://host:port/api/v1`. */
  url: string;
  key: string;
  /** Attempts per batch for network errors, 429 and 5xx (ingest is idempotent: retrying is safe). */
  attempts?: number;
  timeoutMs?: number;
  sleep?: (ms: number) => Promise<void>;
  /** Offer the records to observability destinations (`--broadcast`); default false. */
  broadcast?: boolean;
}

/** The ingest endpoint of the API whose base the user gave (with or without /api/v1). */
export function ingestUrl(base: string): string {
  const u = new URL(base);
  const path = u.pathname.replace(/\/+$/, "");
  u.pathname = `${path.endsWith("/api/v1") ? path : `${path}/api/v1`}/activity/generations`;
  return u.toString();
}

const delay = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/**
 * Ingest through a running server's POST /activity/generations (NDJSON bodies). Network errors,
 * 429 (waiting Retry-After) and 5xx are retried with backoff: a batch is idempotent by id, so a
 * retry after a lost answer never counts a record twice.
 */
export function httpSink(opts: HttpSinkOptions): BatchSink {
  const url = `${ingestUrl(opts.url)}?broadcast=${opts.broadcast ? "true" : "false"}`;
  const attempts = opts.attempts ?? 8;
  const sleep = opts.sleep ?? delay;
  return {
    submit: async (items) => {
      const body = items.map((i) => i.raw).join("\n") + "\n";
      let lastProblem = "";
      for (let attempt = 1; attempt <= attempts; attempt++) {
        let res: Response;
        try {
          res = await fetch(url, {
            method: "POST",
            headers: { authorization: `Bearer ${opts.key}`, "content-type": "application/x-ndjson" },
            body,
            signal: AbortSignal.timeout(opts.timeoutMs ?? 120_000),
          });
        } catch (err) {
          lastProblem = err instanceof Error ? `${err.message}${causeOf(err)}` : String(err);
          await sleep(backoff(attempt));
          continue;
        }
        const payload = (await res.json().catch(() => null)) as {
          data?: IngestResult;
          error?: { message?: string; metadata?: Record<string, unknown> | null };
        } | null;
        if (res.status === 200 && payload?.data) return payload.data;
        if (!payload?.data && !payload?.error && res.status !== 429 && res.status < 500) {
          throw new SinkFailure(notGatehouseAnswer(url, res));
        }
        const message = payload?.error?.message ?? `HTTP ${res.status}`;
        if (res.status === 400) throw rejectedFrom(payload?.error?.metadata, message);
        if (res.status === 429 || res.status >= 500) {
          lastProblem = `${res.status} ${message}`;
          const retryAfter = Number(res.headers.get("retry-after"));
          await sleep(Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : backoff(attempt));
          continue;
        }
        if (res.status === 401 || res.status === 403) {
          throw new SinkFailure(`${url} answered ${res.status}: ${message} (--key must be a management key)`);
        }
        if (res.status === 413) {
          throw new SinkFailure(`${url} answered 413: ${message} (use a smaller --batch)`);
        }
        throw new SinkFailure(`${url} answered ${res.status}: ${message}`);
      }
      throw new SinkFailure(`${url}: gave up after ${attempts} attempts: ${lastProblem}`);
    },
  };
}

const backoff = (attempt: number) => Math.min(30_000, 250 * 2 ** (attempt - 1));

function causeOf(err: Error): string {
  const c = err.cause;
  return c instanceof Error && c.message ? `: ${c.message}` : "";
}
