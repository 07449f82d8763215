import { MAX_USD } from "../lib/money.js";
import {
  DERIVED_COLUMNS,
  GENERATION_FIELDS,
  MAX_CLASSIFICATIONS,
  type GenerationField,
} from "./generation-fields.js";

/*
 * docs/generation-record.md, rendered from the field table. test/unit/generation-record-doc.test.ts
 * fails when the file in docs/ differs; GATEHOUSE_UPDATE_DOCS=1 makes that test write it.
 */

const ABSENT: Record<GenerationField["absent"], string> = {
  none: "—",
  null: "null",
  zero: "0",
  false: "false",
  "key-workspace": "omitted: the key's workspace; null: legacy (default workspace)",
  "key-creator": "the key's creator_user_id",
};

function checkText(f: GenerationField): string {
  const c = f.check;
  switch (c.type) {
    case "text": {
      const len = f.required ? `1 to ${c.max} characters` : `at most ${c.max} characters; "" = null`;
      const pattern = c.pattern ? `; ${c.pattern.message.replace(/^must be /, "")}` : "";
      return `string, ${len}, no control characters${pattern}${c.upper ? "; stored upper case" : ""}`;
    }
    case "timestamp":
      return "RFC 3339 string with seconds and an offset, from 2000-01-01 to 24 hours after the server's clock";
    case "uuid":
      return "UUID or null (stored lower case)";
    case "integer":
      return `integer >= ${c.min}, at most 2^53 - 1`;
    case "usd":
      return `number (USD)${c.signed ? "" : " >= 0"}, at most ${MAX_USD.toLocaleString("en-US")} in absolute value; stored as nano-USD`;
    case "millis":
      return "number >= 0 (milliseconds)";
    case "flag":
      return "boolean";
    case "classifications":
      return `array of at most ${MAX_CLASSIFICATIONS} tags`;
  }
}

function storage(f: GenerationField): string {
  const t = f.target;
  if ("column" in t)
    return `\`generations.${t.column === "created_at_ms" ? "created_at" : t.column}\` (${t.kind})`;
  if ("label" in t) return `label (${t.label === "app_title" ? "`app_labels`" : "`user_labels`"})`;
  return "`generation_tags`";
}

const cell = (s: string): string => s.replace(/\|/g, "\\|");

export function renderGenerationRecordDoc(): string {
  const rows = GENERATION_FIELDS.map(
    (f) =>
      `| \`${f.wire}\` | ${f.required ? "yes" : "no"} | ${cell(checkText(f))} | ${cell(ABSENT[f.absent])} | ${storage(f)} | ${cell(f.description)} |`,
  );
  const derived = Object.entries(DERIVED_COLUMNS).map(([c, kind]) => `\`${c}\` (${kind})`);
  return [
    "# The generation record",
    "",
    "<!-- Generated from src/activity/generation-fields.ts by test/unit/generation-record-doc.test.ts",
    "     (GATEHOUSE_UPDATE_DOCS=1 npx vitest run test/unit/generation-record-doc.test.ts). Do not edit. -->",
    "",
    "One record per finished model request, sent to `POST /api/v1/activity/generations` (see",
    "[activity.md](activity.md)). This table is the one source of the ingest validator, the record schema",
    "in `/api/v1/openapi.json` and the activity columns; a test proves the schema and the validator agree.",
    "Unknown fields are ignored. A field's problem is reported as `generations[i].<field>: <problem>`.",
    "",
    "| Field | Required | Type and check | When absent (omitted or null) | Stored in | Meaning |",
    "| ----- | -------- | -------------- | ----------------------------- | --------- | ------- |",
    ...rows,
    "",
    `Each tag of \`classifications\` is an object: \`classifier_id\` (UUID, stored lower case), \`dimension_name\``,
    "(snake_case, at most 64 characters) and `value` (1 to 256 characters, no control characters).",
    "",
    `Columns computed at ingest rather than sent: ${derived.join(", ")}.`,
    "`context_length_bucket` is derived from `tokens_prompt`, `throughput` from `tokens_completion` and",
    "`generation_time_ms`.",
    "",
    "Lengths count UTF-16 code units, so a character outside the Basic Multilingual Plane (an emoji) counts",
    "as two; JSON Schema's `maxLength` in the published schema counts it as one. The created_at range",
    "depends on the server's clock and is not in the schema.",
    "",
  ].join("\n");
}
