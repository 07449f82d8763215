/**
 * Data of the analytics query benchmark: organizations, workspaces and keys in the record store
 * (as the API would create them), and N generations written straight into a DuckDB activity file
 * by DuckDB itself (`range()` + a hash per row and attribute: deterministic, parallel, minutes
 * instead of hours through HTTP). The rows have exactly the shape ingest writes (the
 * `generations` table of src/stores/duckdb/duckdb-ddl.ts, derived columns computed the same way).
 *
 * Shape: N generations over 90 days ending at `endMs`, in created_at order (as a live gateway
 * appends them), traffic growing linearly from 0.5× to 1.5× over the period; organizations
 * interleaved (80 % / 15 % / 5 % of the rows); per organization a Zipf-like key skew (the busiest
 * of 50 keys sends ~21 %), each key with its own favourite among 20 models (the busiest model of a
 * key ~22 % of its traffic), real list prices per model, BYOK 10 %, users, apps, countries,
 * origins, finish reasons, cached tokens, reasoning tokens, web search on 3 %.
 */
import { DuckDBInstance } from "@duckdb/node-api";
import { hashKey, keyLabel, newKeyString } from "../../src/lib/ids.js";
import type { Clock } from "../../src/lib/clock.js";
import { insertKey } from "../../src/domain/keys/key-repo.js";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { insertWorkspace } from "../../src/domain/workspaces/workspace-repo.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { DUCKDB_DDL } from "../../src/stores/duckdb/duckdb-ddl.js";

export const DAY_MS = 86_400_000;
export const SPAN_DAYS = 90;

/** [model, provider, USD per million prompt tokens, USD per million completion tokens] */
const MODELS: readonly (readonly [string, string, number, number])[] = [
  ["openai/gpt-4o", "OpenAI", 2.5, 10],
  ["openai/gpt-4o-mini", "OpenAI", 0.15, 0.6],
  ["openai/gpt-4.1", "OpenAI", 2, 8],
  ["openai/o3-mini", "OpenAI", 1.1, 4.4],
  ["anthropic/claude-sonnet-4", "Anthropic", 3, 15],
  ["anthropic/claude-3.5-haiku", "Amazon Bedrock", 0.8, 4],
  ["anthropic/claude-opus-4", "Anthropic", 15, 75],
  ["google/gemini-2.5-pro", "Google Vertex", 1.25, 10],
  ["google/gemini-2.5-flash", "Google AI Studio", 0.3, 2.5],
  ["google/gemma-3-27b-it", "DeepInfra", 0.1, 0.2],
  ["deepseek/deepseek-chat", "DeepInfra", 0.27, 1.1],
  ["deepseek/deepseek-r1", "Together", 0.55, 2.19],
  ["meta-llama/llama-3.3-70b-instruct", "Together", 0.12, 0.3],
  ["meta-llama/llama-4-maverick", "Groq", 0.2, 0.6],
  ["mistralai/mistral-large", "Mistral", 2, 6],
  ["mistralai/mistral-small-3.1", "Mistral", 0.1, 0.3],
  ["qwen/qwen3-235b-a22b", "Fireworks", 0.13, 0.6],
  ["qwen/qwen-2.5-coder-32b", "Fireworks", 0.07, 0.16],
  ["x-ai/grok-3-mini", "xAI", 0.3, 0.5],
  ["cohere/command-r-plus", "Cohere", 2.5, 10],
];
const ORIGINS = ["https://app.example.com", "api", "https://chat.example.org", "https://ide.example.dev"];
const COUNTRIES = ["US", "DE", "GB", "FR", "IN", "BR", "JP", "CA", "NL", "SG"];
const FINISH = ["stop", "stop", "stop", "stop", "length", "tool_calls", "stop", "content_filter", "error"];

export interface BenchKey {
  id: number;
  hash: string;
  workspaceId: string;
}

export interface BenchOrg {
  organizationId: string;
  managementKey: string;
  /** Share of all rows. */
  share: number;
  /** Keys by traffic rank: keys[0] is the busiest. */
  keys: BenchKey[];
}

const ORG_SHARES = [0.8, 0.15, 0.05];
const KEYS_PER_ORG = [50, 20, 10];

/** Organizations (3, or fewer), 3 workspaces each, ordinary keys spread over them: as the API creates them. */
export async function seedRecordStore(
  store: RecordStore,
  clock: Clock,
  orgCount: number,
): Promise<BenchOrg[]> {
  const shares = ORG_SHARES.slice(0, orgCount);
  const total = shares.reduce((s, x) => s + x, 0);
  const out: BenchOrg[] = [];
  for (const [o, share] of shares.entries()) {
    const org = await createOrganization(store, clock, `Bench org ${o}`);
    const workspaces = [org.workspaceId];
    for (const name of ["Production", "Staging"]) {
      workspaces.push(
        await insertWorkspace(store.db, {
          organizationId: org.organizationId,
          name,
          slug: name.toLowerCase(),
          isDefault: false,
          createdBy: null,
          now: clock.now(),
        }),
      );
    }
    const keys: BenchKey[] = [];
    for (let k = 0; k < (KEYS_PER_ORG[o] as number); k++) {
      const key = newKeyString();
      const workspaceId = workspaces[k % workspaces.length] as string;
      await insertKey(store.db, {
        hash: hashKey(key),
        label: keyLabel(key),
        organizationId: org.organizationId,
        workspaceId,
        name: `service ${o}-${k}`,
        isManagement: false,
        limitNano: null,
        limitReset: null,
        includeByokInLimit: false,
        creatorUserId: `user_${k}`,
        externalUser: null,
        externalKeyHash: null,
        expiresAt: null,
        now: clock.now(),
      });
      const row = await store.db
        .selectFrom("api_keys")
        .select("id")
        .where("hash", "=", hashKey(key))
        .executeTakeFirstOrThrow();
      keys.push({ id: Number(row.id), hash: hashKey(key), workspaceId });
    }
    out.push({
      organizationId: org.organizationId,
      managementKey: org.managementKey,
      share: share / total,
      keys,
    });
  }
  return out;
}

const str = (s: string): string => `'${s.replaceAll("'", "''")}'`;
const list = (xs: readonly (string | number)[]): string =>
  `[${xs.map((x) => (typeof x === "number" ? String(x) : str(x))).join(", ")}]`;

/**
 * The INSERT ... SELECT that generates `rows` generations. u(k) is the k-th uniform in [0, 1) of
 * row i, from DuckDB's hash of (i, k): deterministic for a given seed, independent of threads.
 */
export function generationSql(orgs: readonly BenchOrg[], rows: number, endMs: number, seed = 1): string {
  const startMs = endMs - SPAN_DAYS * DAY_MS;
  const keys = orgs.flatMap((o) => o.keys);
  const offsets = orgs.map((_, o) => orgs.slice(0, o).reduce((s, x) => s + x.keys.length, 0));
  const cumShares = orgs.map((_, o) => orgs.slice(0, o + 1).reduce((s, x) => s + x.share, 0));
  const u = (k: number) => `u${k}`;
  const uniforms = Array.from(
    { length: 24 },
    (_, k) => `(hash(i * 64 + ${k}, ${seed}) % 1000000)::DOUBLE / 1e6 AS ${u(k)}`,
  ).join(",\n      ");
  // nano-USD per token = USD per million tokens × 1000.
  const pNano = MODELS.map((m) => Math.round(m[2] * 1000));
  const cNano = MODELS.map((m) => Math.round(m[3] * 1000));
  return `
INSERT INTO generations
WITH r AS (
  SELECT i,
      ${uniforms}
  FROM range(${rows}) t(i)
), o AS (
  SELECT *,
    CASE ${cumShares
      .slice(0, -1)
      .map((c, ix) => `WHEN u0 < ${c} THEN ${ix}`)
      .join(" ")} ELSE ${orgs.length - 1} END AS org_ix,
    -- traffic grows linearly from 0.5x to 1.5x: the inverse of its cumulative share
    (-0.5 + sqrt(0.25 + 2 * (i::DOUBLE / ${rows}))) AS tf
  FROM r
), k AS (
  SELECT *,
    ${list(offsets)}[org_ix + 1] + least(${list(orgs.map((x) => x.keys.length))}[org_ix + 1] - 1,
      floor(${list(orgs.map((x) => x.keys.length))}[org_ix + 1] * pow(u1, 2.5))::INTEGER) AS kx
  FROM o
), m AS (
  SELECT *,
    ((kx * 7 + floor(${MODELS.length} * pow(u2, 2))::INTEGER) % ${MODELS.length}) AS mx,
    floor(40000 * u3 * u4)::BIGINT AS tp,
    floor(2000 * u5)::BIGINT AS tc,
    u8 < 0.1 AS byok
  FROM k
), c AS (
  SELECT *,
    tp * ${list(pNano)}[mx + 1] + tc * ${list(cNano)}[mx + 1] AS inference,
    CASE WHEN u7 < 0.3 THEN tp // 3 ELSE 0 END AS cached,
    CASE WHEN u11 < 0.03 THEN NULL ELSE 200 + tc * (10 + 30 * u12) END AS gen_ms
  FROM m
)
SELECT
  ${list(orgs.map((x) => x.organizationId))}[org_ix + 1] AS organization_id,
  'gen-' || (${Math.floor(startMs / 1000)} + i) || '-' || substr(md5(i::VARCHAR || '${seed}'), 1, 20) AS id,
  epoch_ms((${startMs} + floor(tf * ${SPAN_DAYS * DAY_MS}))::BIGINT) AS created_at,
  ${list(keys.map((x) => x.id))}[kx + 1] AS api_key_id,
  ${list(keys.map((x) => x.hash))}[kx + 1] AS api_key_hash,
  ${list(keys.map((x) => x.workspaceId))}[kx + 1] AS workspace_id,
  ${list(MODELS.map((x) => x[0]))}[mx + 1] AS model,
  ${list(MODELS.map((x) => x[1]))}[mx + 1] AS provider,
  CASE WHEN u9 < 0.05 THEN 'free' END AS variant,
  CASE WHEN u10 < 0.2 THEN NULL ELSE 1 + floor(30 * u10 * u10)::BIGINT END AS app_id,
  CASE WHEN u13 < 0.3 THEN NULL ELSE 'user_' || floor(2000 * u13 * u13)::BIGINT END AS user_id,
  CASE WHEN u14 < 0.25 THEN 'end-user-' || floor(5000 * u14 * 4)::BIGINT END AS external_user,
  ${list(ORIGINS)}[1 + floor(${ORIGINS.length} * u15)::INTEGER] AS origin,
  ${list(COUNTRIES)}[1 + floor(${COUNTRIES.length} * u16)::INTEGER] AS country,
  ${list(FINISH)}[1 + floor(${FINISH.length} * u17)::INTEGER] AS finish_reason,
  CASE WHEN tp < 1000 THEN '0-1K' WHEN tp < 4000 THEN '1K-4K' WHEN tp < 16000 THEN '4K-16K'
       WHEN tp < 64000 THEN '16K-64K' WHEN tp < 128000 THEN '64K-128K' ELSE '128K+' END
    AS context_length_bucket,
  tp AS tokens_prompt,
  tc AS tokens_completion,
  CASE WHEN u6 < 0.2 THEN tc // 2 ELSE 0 END AS tokens_reasoning,
  cached AS tokens_cached,
  byok AS is_byok,
  u18 < 0.7 AS streamed,
  u19 < 0.02 AS cancelled,
  u20 < 0.02 AS response_cached,
  u21 < 0.01 AS guardrail_invoked,
  CASE WHEN byok THEN inference // 20 ELSE inference END AS usage_nano,
  CASE WHEN byok THEN inference ELSE 0 END AS byok_usage_inference_nano,
  inference AS usage_upstream_nano,
  CASE WHEN cached > 0 THEN cached * ${list(pNano)}[mx + 1] // 10 ELSE 0 END AS usage_cache_nano,
  0::BIGINT AS usage_data_nano,
  CASE WHEN u22 < 0.03 THEN 4000000 ELSE 0 END::BIGINT AS usage_web_nano,
  CASE WHEN u22 < 0.03 THEN 4000000 ELSE 0 END::BIGINT AS usage_upstream_web_nano,
  0::BIGINT AS usage_file_nano,
  0::BIGINT AS usage_upstream_file_nano,
  0::BIGINT AS usage_web_fetch_nano,
  0::BIGINT AS usage_upstream_web_fetch_nano,
  floor(80 + 2500 * u23 * u23)::DOUBLE AS latency_ms,
  gen_ms::DOUBLE AS generation_time_ms,
  CASE WHEN gen_ms > 0 THEN tc / (gen_ms / 1000) END AS throughput
FROM c`;
}

/**
 * Creates the activity schema (the store's own DDL) in a DuckDB file and fills `generations`.
 * Returns the elapsed milliseconds. The file is closed (and checkpointed) afterwards.
 */
export async function generateActivity(
  path: string,
  orgs: readonly BenchOrg[],
  rows: number,
  endMs: number,
): Promise<number> {
  const t = performance.now();
  const instance = await DuckDBInstance.create(path);
  const conn = await instance.connect();
  try {
    for (const ddl of DUCKDB_DDL) await conn.run(ddl);
    await conn.run(generationSql(orgs, rows, endMs));
    await conn.run("CHECKPOINT");
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
  return performance.now() - t;
}
