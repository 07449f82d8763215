import { Type, type TSchema } from "typebox";
import {
  GENERATION_FIELDS,
  MAX_CLASSIFICATIONS,
  type GenerationField,
  type TextPattern,
} from "../../activity/generation-fields.js";
import { MAX_RECORDS } from "../../domain/ingest/records/validate-generations.js";
import { MAX_USD } from "../../lib/money.js";
import { Nullable } from "./common.js";

/**
 * Wire schemas of POST /activity/generations. The record schema is generated from the field table
 * (activity/generation-fields.ts), as the ingest validator is; it documents the operation in the
 * OpenAPI document, and test/fuzz/generation-schema.test.ts proves that Ajv with it and the
 * validator agree. The body itself is checked by the validator (all records at once, so that the
 * answer lists every problem), not by Ajv. Checks no JSON Schema can state (created_at within
 * 2000-01-01 .. now + 24 hours; lengths in UTF-16 code units) are in the field descriptions.
 */

/** No control characters (U+0000-U+001F, U+007F), as the validator requires of every text. */
const NO_CONTROL = "[^\\u0000-\\u001f\\u007f]*";
const UUID_SOURCE = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";
/** RFC 3339 with seconds and an offset, every part in its range (the calendar: format date-time). */
const TIMESTAMP_SOURCE =
  "^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])T([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(\\.\\d{1,9})?(Z|[+-]([01]\\d|2[0-3]):[0-5]\\d)$";

/** A text pattern's expression without its anchors. */
const inner = (p: TextPattern): string => p.re.source.replace(/^\^/, "").replace(/\$$/, "");

/** The JSON Schema pattern of a text field: no control characters, and its own pattern if any. */
function textPattern(p: TextPattern | undefined, emptyAllowed: boolean): string {
  if (!p) return `^${NO_CONTROL}$`;
  const body = emptyAllowed ? `(?:${inner(p)})?` : inner(p);
  return `^(?=${NO_CONTROL}$)${body}$`;
}

const optional = (f: GenerationField, t: TSchema): TSchema => (f.required ? t : Type.Optional(Nullable(t)));

function fieldSchema(f: GenerationField): TSchema {
  const c = f.check;
  const description = f.description;
  switch (c.type) {
    case "text":
      return f.required
        ? Type.String({ minLength: 1, maxLength: c.max, pattern: textPattern(c.pattern, false), description })
        : optional(f, Type.String({ maxLength: c.max, pattern: textPattern(c.pattern, true), description }));
    case "timestamp":
      return Type.String({ format: "date-time", pattern: TIMESTAMP_SOURCE, description });
    case "uuid":
      return optional(f, Type.String({ format: "uuid", pattern: `^${UUID_SOURCE}$`, description }));
    case "integer":
      return optional(f, Type.Integer({ minimum: c.min, maximum: Number.MAX_SAFE_INTEGER, description }));
    case "usd":
      return optional(
        f,
        Type.Number(
          c.signed
            ? { minimum: -MAX_USD, maximum: MAX_USD, description }
            : { minimum: 0, maximum: MAX_USD, description },
        ),
      );
    case "millis":
      return optional(f, Type.Number({ minimum: 0, description }));
    case "flag":
      return optional(f, Type.Boolean({ description }));
    case "classifications":
      return optional(
        f,
        Type.Array(
          Type.Object({
            classifier_id: Type.String({ format: "uuid", pattern: `^${UUID_SOURCE}$` }),
            dimension_name: Type.String({ maxLength: 64, pattern: "^[a-z][a-z0-9]*(_[a-z0-9]+)*$" }),
            value: Type.String({ minLength: 1, maxLength: 256, pattern: `^${NO_CONTROL}$` }),
          }),
          { maxItems: MAX_CLASSIFICATIONS, description },
        ),
      );
  }
}

export const GenerationRecord = Type.Object(
  Object.fromEntries(GENERATION_FIELDS.map((f) => [f.wire, fieldSchema(f)])),
);

export const IngestBody = Type.Object({
  generations: Type.Array(GenerationRecord, { minItems: 1, maxItems: MAX_RECORDS }),
});

export const IngestResponse = Type.Object({
  data: Type.Object({
    accepted: Type.Integer({ minimum: 0 }),
    duplicates: Type.Integer({ minimum: 0 }),
  }),
});

/**
 * `?broadcast=false` loads history without offering it to destinations (gatehouse import). Other
 * parameters are ignored, as on every other operation.
 */
export const IngestQuery = Type.Object({
  broadcast: Type.Optional(
    Type.Union([Type.Literal("true"), Type.Literal("false")], {
      description: "Offer the records to the workspace's observability destinations (default true)",
    }),
  ),
});
