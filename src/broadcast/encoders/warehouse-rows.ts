import type { BroadcastGeneration } from "./encoder.js";
import { generationAttributes } from "./genai-attributes.js";
import { viewOf } from "./generation-view.js";

/**
 * One row per observation (the generation, and each provider attempt when there were several),
 * in the column set the hosted original's warehouse docs query (docs/broadcast.md
 * "Native APIs", warehouse tables). JSON columns hold JSON text; null marks "not known".
 */
export interface WarehouseRow {
  TIMESTAMP: number;
  TRACE_ID: string;
  SPAN_ID: string;
  PARENT_SPAN_ID: string | null;
  GENERATION_ID: string;
  NAME: string;
  SPAN_TYPE: "GENERATION" | "SPAN";
  STATUS: "ok" | "error";
  LEVEL: "DEFAULT" | "ERROR";
  USER_ID: string | null;
  SESSION_ID: string | null;
  MODEL: string;
  PROVIDER_NAME: string;
  API_KEY_NAME: string | null;
  FINISH_REASON: string | null;
  PROMPT_TOKENS: number;
  COMPLETION_TOKENS: number;
  TOTAL_TOKENS: number;
  TOTAL_COST: number | null;
  DURATION_MS: number;
  ATTRIBUTES: string;
  INPUT: string | null;
  OUTPUT: string | null;
  METADATA: string;
  MODEL_PARAMETERS: string | null;
}

/** Column names and their order, shared by the ClickHouse and Snowflake DDL and inserts. */
export const WAREHOUSE_COLUMNS = [
  "TIMESTAMP",
  "TRACE_ID",
  "SPAN_ID",
  "PARENT_SPAN_ID",
  "GENERATION_ID",
  "NAME",
  "SPAN_TYPE",
  "STATUS",
  "LEVEL",
  "USER_ID",
  "SESSION_ID",
  "MODEL",
  "PROVIDER_NAME",
  "API_KEY_NAME",
  "FINISH_REASON",
  "PROMPT_TOKENS",
  "COMPLETION_TOKENS",
  "TOTAL_TOKENS",
  "TOTAL_COST",
  "DURATION_MS",
  "ATTRIBUTES",
  "INPUT",
  "OUTPUT",
  "METADATA",
  "MODEL_PARAMETERS",
] as const satisfies readonly (keyof WarehouseRow)[];

/**
 * Every string (and property name) with each lone surrogate as U+FFFD, as UTF-8 text has it. A
 * text cut inside an emoji (the recorder keeps the first 1,024 UTF-16 units of `user`) holds half
 * of one; JSON.stringify writes it as an escape such as "\ud83d", which ClickHouse's JSONEachRow
 * refuses (CANNOT_PARSE_ESCAPE_SEQUENCE), failing the whole insert.
 */
function wellFormed<T>(value: T): T {
  if (typeof value === "string") return value.toWellFormed() as T;
  if (Array.isArray(value)) return value.map(wellFormed) as T;
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([k, x]) => [wellFormed(k), wellFormed(x)])) as T;
}

export function warehouseRows(generation: BroadcastGeneration): WarehouseRow[] {
  const g = wellFormed(generation);
  const v = viewOf(g);
  const common = {
    TRACE_ID: v.traceId,
    GENERATION_ID: g.id,
    USER_ID: v.userId,
    SESSION_ID: v.sessionId,
    API_KEY_NAME: g.identity?.apiKeyName ?? null,
    METADATA: JSON.stringify(v.metadata),
  };
  const rows: WarehouseRow[] = [];
  for (const span of v.spans) {
    const isGeneration = span.role === "generation";
    const attempt = span.attempt;
    rows.push({
      ...common,
      TIMESTAMP: span.startMs,
      SPAN_ID: span.spanId,
      PARENT_SPAN_ID: span.parentSpanId,
      NAME: span.name,
      SPAN_TYPE: isGeneration ? "GENERATION" : "SPAN",
      STATUS: span.error ? "error" : "ok",
      LEVEL: span.error ? "ERROR" : "DEFAULT",
      MODEL: attempt?.model ?? g.model,
      PROVIDER_NAME: attempt?.provider ?? g.provider,
      FINISH_REASON: isGeneration ? v.finishReason : null,
      PROMPT_TOKENS: isGeneration ? g.tokensPrompt : 0,
      COMPLETION_TOKENS: isGeneration ? g.tokensCompletion : 0,
      TOTAL_TOKENS: isGeneration ? g.tokensPrompt + g.tokensCompletion : 0,
      TOTAL_COST: isGeneration ? (g.cost?.totalUsd ?? null) : null,
      DURATION_MS: span.endMs - span.startMs,
      ATTRIBUTES: JSON.stringify(
        isGeneration
          ? generationAttributes(v, { metadataPrefix: "trace.metadata." })
          : {
              attempt_index: attempt?.index ?? null,
              status_code: attempt?.status ?? null,
              is_byok: g.isByok,
            },
      ),
      INPUT: isGeneration && v.input !== null ? JSON.stringify(v.input) : null,
      OUTPUT: isGeneration && v.input !== null ? JSON.stringify(v.output ?? "") : null,
      MODEL_PARAMETERS: isGeneration && g.params !== null ? JSON.stringify(g.params) : null,
    });
  }
  return rows;
}
