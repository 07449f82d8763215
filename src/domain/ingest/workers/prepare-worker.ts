import { parentPort } from "node:worker_threads";
import { DomainError } from "../../errors.js";
import {
  checkRecords,
  normaliseBatch,
  preparedRowsOf,
  type Batch,
  type CheckedRecords,
} from "../records/normalise-batch.js";
import type { PoolReply, PoolRequest, WireError } from "./prepare-pool.js";

/**
 * An ingest worker thread (prepare-pool.ts): runs the phases of prepare-batch.ts for the main
 * thread, keeping each batch between its messages until it is released.
 */
const port = parentPort;
if (!port) throw new Error("prepare-worker.ts runs as a worker thread");

const jobs = new Map<number, { checked: CheckedRecords | null; batch: Batch | null }>();

function wireError(err: unknown): WireError {
  if (err instanceof DomainError) {
    return { domain: true, code: err.code, message: err.message, metadata: err.metadata };
  }
  return { domain: false, message: err instanceof Error ? err.message : String(err) };
}

function answer(m: Exclude<PoolRequest, { t: "release" }>): unknown {
  switch (m.t) {
    case "check": {
      const checked = checkRecords(m.input, m.nowMs);
      jobs.set(m.job, { checked, batch: null });
      return checked.refs;
    }
    case "normalise": {
      const job = jobs.get(m.job);
      if (!job?.checked) throw new Error(`ingest worker: no batch ${m.job} to normalise`);
      const batch = normaliseBatch(job.checked, m.organizationId, m.refs);
      job.checked = null;
      job.batch = batch;
      return preparedRowsOf(batch);
    }
    case "subset": {
      const batch = jobs.get(m.job)?.batch;
      if (!batch) throw new Error(`ingest worker: no batch ${m.job}`);
      return preparedRowsOf(batch, new Set(m.ids));
    }
  }
}

port.on("message", (m: PoolRequest) => {
  if (m.t === "release") {
    jobs.delete(m.job);
    return;
  }
  let reply: PoolReply;
  try {
    reply = { job: m.job, ok: true, value: answer(m) };
  } catch (err) {
    if (m.t !== "subset") jobs.delete(m.job);
    reply = { job: m.job, ok: false, error: wireError(err) };
  }
  port.postMessage(reply);
});
