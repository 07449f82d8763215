import { parse as secureJsonParse } from "secure-json-parse";
import {
  contextLengthBucket,
  throughputOf,
  type ActivityRow,
  type ClassificationRow,
} from "../../activity/activity-row.js";
import { encodeActivity, payloadOf } from "../../stores/column-texts.js";
import { DomainError, invalid } from "../errors.js";
import { UsageTally, type CounterRow } from "../usage/ledger.js";
import type { UserLabel } from "./labels-repo.js";
import {
  MAX_RECORDS,
  parseRecords,
  Problems,
  UnparsableLine,
  type ParsedRecord,
} from "./validate-generations.js";

/*
 * The part of ingest that needs no store: body → records → validated, normalised rows → what the
 * stores must be told. Pure and synchronous, so that it can run on a worker thread
 * (prepare-pool.ts) as well as inline (batch-preparer.ts); the one step between that needs the
 * record store (resolving key hashes and workspace ids) is a callback between the two phases.
 */

/**
 * What arrives: a request body not yet parsed (its bytes, UTF-8, or text), or records already
 * parsed (CLI import, tests).
 */
export type IngestInput =
  | { format: "json" | "ndjson"; text: string | Uint8Array }
  | { format: "records"; records: readonly unknown[] };

/** Bytes → text as Fastify decodes a body (invalid sequences become U+FFFD; a BOM is kept). */
const textOf = (body: string | Uint8Array): string =>
  typeof body === "string"
    ? body
    : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8");

export interface KeyRef {
  id: number;
  workspaceId: string;
  creatorUserId: string | null;
}

/** References a batch makes, for the record store to resolve. */
export interface RefsNeeded {
  /** Distinct key hashes. */
  hashes: string[];
  /** Distinct explicit workspace ids. */
  workspaceIds: string[];
  /** Some record is legacy activity (workspace_id null): the default workspace is needed. */
  legacy: boolean;
}

/** The organization's answers; absent entries are reported as problems of the records using them. */
export interface ResolvedRefs {
  keys: Map<string, KeyRef>;
  workspaces: Set<string>;
  legacyWorkspace: string | null;
}

/** What the stores must learn about a batch's rows, as plain data (it crosses threads). */
export interface PreparedRows {
  /** Records in the request (repeated ids included). */
  received: number;
  /** Distinct ids in record order. */
  ids: string[];
  /** Ledger counters to add. */
  counters: CounterRow[];
  apps: Map<number, string>;
  users: Map<string, UserLabel>;
  /** The rows and their tags, encoded for the activity store (column-texts.ts payloadOf). */
  payload: string;
}

/** One record per line; blank lines are skipped; a line that is not JSON is reported as its record's problem. */
export function parseNdjson(text: string): unknown[] {
  const records: unknown[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line === "") continue;
    if (records.length === MAX_RECORDS) {
      throw new DomainError("payload_too_large", `generations: at most ${MAX_RECORDS} records per request`);
    }
    try {
      records.push(JSON.parse(line));
    } catch {
      records.push(new UnparsableLine(i + 1));
    }
  }
  if (records.length === 0) throw invalid("generations: at least 1 record");
  return records;
}

/** `{"generations": [...]}` → the list, or the problem with the envelope itself. */
export function recordsOf(body: unknown): unknown[] {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw invalid("body: must be a JSON object");
  const g = (body as { generations?: unknown }).generations;
  if (g === undefined) throw invalid("generations: is required");
  if (!Array.isArray(g)) throw invalid("generations: must be an array");
  if (g.length === 0) throw invalid("generations: at least 1 record");
  if (g.length > MAX_RECORDS) {
    throw new DomainError("payload_too_large", `generations: at most ${MAX_RECORDS} records per request`);
  }
  return g;
}

/**
 * A JSON body as Fastify's own parser reads it (secure-json-parse, refusing `__proto__` and
 * `constructor.prototype` keys), with the same answers for an empty or unparsable body.
 */
function parseJsonBody(text: string): unknown {
  if (text.length === 0) throw invalid("body: must be a JSON object (the body is empty)");
  try {
    return secureJsonParse(text, { protoAction: "error", constructorAction: "error" });
  } catch {
    throw invalid("body: is not valid JSON");
  }
}

export function recordsOfInput(input: IngestInput): readonly unknown[] {
  switch (input.format) {
    case "records":
      return input.records;
    case "ndjson":
      return parseNdjson(textOf(input.text));
    case "json":
      return recordsOf(parseJsonBody(textOf(input.text)));
  }
}

export function toRow(r: ParsedRecord, organizationId: string, key: KeyRef): ActivityRow {
  return {
    organization_id: organizationId,
    id: r.id,
    created_at_ms: r.createdAtMs,
    api_key_id: key.id,
    api_key_hash: r.apiKeyHash,
    workspace_id: r.workspaceId === undefined ? key.workspaceId : r.workspaceId,
    model: r.model,
    provider: r.provider,
    variant: r.variant,
    app_id: r.appId,
    user_id: r.userId === undefined ? key.creatorUserId : r.userId,
    external_user: r.externalUser,
    origin: r.origin,
    country: r.country,
    finish_reason: r.finishReason,
    context_length_bucket: contextLengthBucket(r.tokensPrompt),
    tokens_prompt: r.tokensPrompt,
    tokens_completion: r.tokensCompletion,
    tokens_reasoning: r.tokensReasoning,
    tokens_cached: r.tokensCached,
    is_byok: r.isByok,
    streamed: r.streamed,
    cancelled: r.cancelled,
    response_cached: r.responseCached,
    guardrail_invoked: r.guardrailInvoked,
    usage_nano: r.usageNano,
    byok_usage_inference_nano: r.byokUsageInferenceNano,
    usage_upstream_nano: r.usageUpstreamNano,
    usage_cache_nano: r.usageCacheNano,
    usage_data_nano: r.usageDataNano,
    usage_web_nano: r.usageWebNano,
    usage_upstream_web_nano: r.usageUpstreamWebNano,
    usage_file_nano: r.usageFileNano,
    usage_upstream_file_nano: r.usageUpstreamFileNano,
    usage_web_fetch_nano: r.usageWebFetchNano,
    usage_upstream_web_fetch_nano: r.usageUpstreamWebFetchNano,
    latency_ms: r.latencyMs,
    generation_time_ms: r.generationTimeMs,
    throughput: throughputOf(r.tokensCompletion, r.generationTimeMs),
  };
}

/** Phase 1: records parsed and checked field by field; what they reference. */
export interface CheckedRecords {
  parsed: ParsedRecord[];
  problems: Problems;
  refs: RefsNeeded;
}

/** Phase 1. Throws the envelope's problem (400/413); field problems wait for phase 2's list. */
export function checkRecords(input: IngestInput, nowMs: number): CheckedRecords {
  const problems = new Problems();
  const parsed = parseRecords(recordsOfInput(input), nowMs, problems);
  const hashes = new Set<string>();
  const workspaceIds = new Set<string>();
  let legacy = false;
  for (const r of parsed) {
    hashes.add(r.apiKeyHash);
    if (typeof r.workspaceId === "string") workspaceIds.add(r.workspaceId);
    else if (r.workspaceId === null) legacy = true;
  }
  return { parsed, problems, refs: { hashes: [...hashes], workspaceIds: [...workspaceIds], legacy } };
}

/** A validated batch, normalised: one row per distinct id (the first record wins). */
export interface Batch {
  organizationId: string;
  /** Records in the request (repeated ids included). */
  received: number;
  rows: ActivityRow[];
  tagsById: Map<string, ClassificationRow[]>;
  labelSource: Map<string, ParsedRecord>;
  keys: Map<string, KeyRef>;
  legacyWorkspace: string | null;
}

/** Phase 2: references checked (throws the 400 listing every problem), rows normalised. */
export function normaliseBatch(checked: CheckedRecords, organizationId: string, refs: ResolvedRefs): Batch {
  const { parsed, problems } = checked;
  const { keys, workspaces, legacyWorkspace } = refs;
  for (const r of parsed) {
    if (!keys.has(r.apiKeyHash)) {
      problems.add(
        r.index,
        `generations[${r.index}].api_key_hash: no key with this hash in the organization`,
      );
    }
    if (typeof r.workspaceId === "string" && !workspaces.has(r.workspaceId)) {
      problems.add(r.index, `generations[${r.index}].workspace_id: no such workspace in the organization`);
    }
  }
  if (problems.total > 0) {
    const list = problems.sorted();
    throw invalid(list[0] ?? "generations: invalid", { problems: list, problem_count: problems.total });
  }

  // A repeated id inside the batch keeps its first record.
  const rows: ActivityRow[] = [];
  const tagsById = new Map<string, ClassificationRow[]>();
  const labelSource = new Map<string, ParsedRecord>();
  for (const r of parsed) {
    if (labelSource.has(r.id)) continue;
    labelSource.set(r.id, r);
    const row = toRow(r, organizationId, keys.get(r.apiKeyHash) as KeyRef);
    rows.push(row);
    if (r.classifications.length > 0) {
      tagsById.set(
        r.id,
        r.classifications.map((c) => ({
          organization_id: organizationId,
          generation_id: r.id,
          workspace_id: row.workspace_id,
          created_at_ms: row.created_at_ms,
          ...c,
        })),
      );
    }
  }
  return {
    organizationId,
    received: parsed.length,
    rows,
    tagsById,
    labelSource,
    keys,
    legacyWorkspace,
  };
}

export function tagsOf(batch: Batch, rows: readonly ActivityRow[]): ClassificationRow[] {
  if (batch.tagsById.size === 0) return [];
  const out: ClassificationRow[] = [];
  for (const r of rows) {
    const tags = batch.tagsById.get(r.id);
    if (tags) for (const t of tags) out.push(t);
  }
  return out;
}

/** What the record store must learn about a set of accepted rows. */
export interface Acceptance {
  usage: UsageTally;
  apps: Map<number, string>;
  users: Map<string, UserLabel>;
}

export function acceptanceOf(batch: Batch, rows: readonly ActivityRow[]): Acceptance {
  const usage = new UsageTally();
  const apps = new Map<number, string>();
  const users = new Map<string, UserLabel>();
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i] as ActivityRow;
    usage.add(
      batch.organizationId,
      r.api_key_hash,
      // Legacy activity (no workspace) counts toward the default workspace, as analytics shows it.
      r.workspace_id ?? batch.legacyWorkspace ?? (batch.keys.get(r.api_key_hash) as KeyRef).workspaceId,
      r.created_at_ms,
      r.usage_nano,
      r.byok_usage_inference_nano,
    );
    const src = batch.labelSource.get(r.id) as ParsedRecord;
    if (r.app_id !== null && src.appTitle !== null) apps.set(r.app_id, src.appTitle);
    if (r.user_id !== null && (src.userName !== null || src.userEmail !== null)) {
      const prev = users.get(r.user_id);
      users.set(r.user_id, {
        name: src.userName ?? prev?.name ?? null,
        email: src.userEmail ?? prev?.email ?? null,
      });
    }
  }
  return { usage, apps, users };
}

/** The batch's rows (or only those whose ids are in `only`), ready for the stores. */
export function preparedRowsOf(batch: Batch, only?: ReadonlySet<string>): PreparedRows {
  const rows = only ? batch.rows.filter((r) => only.has(r.id)) : batch.rows;
  const { usage, apps, users } = acceptanceOf(batch, rows);
  return {
    received: batch.received,
    ids: rows.map((r) => r.id),
    counters: usage.rows(),
    apps,
    users,
    payload: payloadOf(encodeActivity(rows, tagsOf(batch, rows))),
  };
}
