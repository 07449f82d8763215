import {
  ACTIVITY_COLUMNS,
  contextLengthBucket,
  throughputOf,
  type ActivityRow,
  type ClassificationRow,
} from "../../../activity/activity-row.js";
import { encodeActivity, payloadOf } from "../../../stores/column-texts.js";
import { invalid } from "../../errors.js";
import { UsageTally, type CounterRow } from "../../usage/ledger.js";
import type { UserLabel } from "../repos/labels-repo.js";
import { GENERATION_FIELDS } from "../../../activity/generation-fields.js";
import { recordsOfInput, type IngestInput } from "./read-body.js";
import { parsedKeyOf, parseRecords, Problems, type ParsedRecord } from "./validate-generations.js";

/*
 * The part of ingest that needs no store: records → validated, normalised rows → what the stores
 * must be told. Pure and synchronous, so that it can run on a worker thread
 * (workers/prepare-pool.ts) as well as inline (pipeline/preparer-port.ts); the one step between
 * that needs the record store (resolving key hashes and workspace ids) is a callback between the
 * two phases (checkRecords, then normaliseBatch).
 */

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

/**
 * The source expression of each column of `generations` in a row built from parsed record `r`:
 * wire columns are copied (GENERATION_FIELDS), the two defaults come from the key, and the
 * DERIVED_COLUMNS are computed here.
 */
function columnSource(column: string): string {
  switch (column) {
    case "organization_id":
      return "organizationId";
    case "api_key_id":
      return "key.id";
    case "workspace_id":
      return "r.workspaceId === undefined ? key.workspaceId : r.workspaceId";
    case "user_id":
      return "r.userId === undefined ? key.creatorUserId : r.userId";
    case "context_length_bucket":
      return "contextLengthBucket(r.tokensPrompt)";
    case "throughput":
      return "throughputOf(r.tokensCompletion, r.generationTimeMs)";
  }
  const f = GENERATION_FIELDS.find((g) => "column" in g.target && g.target.column === column);
  if (!f) throw new Error(`field table: no wire field or derivation for column ${column}`);
  return `r.${parsedKeyOf(f)}`;
}

type RowBuilder = (r: ParsedRecord, organizationId: string, key: KeyRef) => ActivityRow;

/**
 * The stored row of a parsed record, compiled once from the column list into one object literal
 * (a fixed shape, as the hand-written mapping was; a loop of keyed copies was half as fast). Only
 * column names and the expressions above go into the source.
 */
export const toRow: RowBuilder = (() => {
  const props = ACTIVITY_COLUMNS.map((c) => {
    if (!/^[a-z_]+$/.test(c)) throw new Error(`bad column name ${c}`);
    return `${c}: ${columnSource(c)}`;
  });
  const source = `return function toRow(r, organizationId, key) {\nreturn { ${props.join(",\n")} };\n}`;
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- compiled from the static column list (see above)
  const make = new Function("contextLengthBucket", "throughputOf", source) as (...a: unknown[]) => RowBuilder;
  return make(contextLengthBucket, throughputOf);
})();

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

/** The labels a record gives its app and user (the latest seen wins: labels-repo.ts). */
export type RowLabels = Pick<ParsedRecord, "appTitle" | "userName" | "userEmail">;

/**
 * A batch of stored rows ready for acceptance, one row per distinct id (the first record wins):
 * normalised from validated wire records (normaliseBatch), or built by a trusted producer from
 * its own typed data (the gateway's served generations: src/gateway/recording/generation-row.ts).
 */
export interface Batch {
  organizationId: string;
  /** Records in the request (repeated ids included). */
  received: number;
  rows: ActivityRow[];
  tagsById: Map<string, ClassificationRow[]>;
  /** Each row's labels, by id. */
  labelSource: Map<string, RowLabels>;
  /** The keys the rows name (for legacy rows' workspace: acceptanceOf). */
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
  const labelSource = new Map<string, RowLabels>();
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
    const src = batch.labelSource.get(r.id) as RowLabels;
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
