import { Type } from "typebox";
import { MAX_OFFSET } from "./common.js";

/** Query schemas of the data plane's read routes (docs/wire-compatibility.md "Model list" and below). */
/** A price bound of /models: USD per million tokens, as the hosted original takes it. */
const priceBound = (description: string) => Type.Optional(Type.Number({ minimum: 0, description }));
/** A filter of the hosted original that has no data here: accepted, checked for its type, ignored. */
const NO_DATA = { description: "No data here: accepted, does not filter" };
const noDataText = () => Type.Optional(Type.String({ maxLength: 1024, ...NO_DATA }));
const noDataNumber = () => Type.Optional(Type.Number(NO_DATA));
const text = (description: string) => Type.Optional(Type.String({ maxLength: 1024, description }));

/**
 * The catalog filters /models, /models/count and /models/user take (the SDK's `models.list` query;
 * docs/gateway.md says which ones filter here and which have no data to filter on).
 */
const modelFilters = {
  supported_parameters: text("Comma-separated: only models that honour every one (on one endpoint)"),
  output_modalities: text(
    "Comma-separated: only models that output one of them (`all`: any); default `text`, chat models only (`embeddings`: the embedding models)",
  ),
  input_modalities: text("Comma-separated: only models that take one of them (`all`: any)"),
  q: text("Case-insensitive text in the id, name or description"),
  providers: text("Comma-separated: only models served by one of them (slug or name, any case)"),
  model_authors: text("Comma-separated: only models whose id starts with one of them and a slash"),
  context: Type.Optional(Type.Integer({ minimum: 0, description: "Minimum context_length (tokens)" })),
  min_price: priceBound("Minimum prompt price, USD per million tokens"),
  max_price: priceBound("Maximum prompt price, USD per million tokens"),
  min_output_price: priceBound("Minimum completion price, USD per million tokens"),
  max_output_price: priceBound("Maximum completion price, USD per million tokens"),
  category: noDataText(),
  arch: noDataText(),
  distillable: noDataText(),
  zdr: noDataText(),
  region: noDataText(),
  min_age_days: Type.Optional(Type.Integer(NO_DATA)),
  max_age_days: Type.Optional(Type.Integer(NO_DATA)),
  min_intelligence_index: noDataNumber(),
  max_intelligence_index: noDataNumber(),
  min_coding_index: noDataNumber(),
  max_coding_index: noDataNumber(),
  min_agentic_index: noDataNumber(),
  max_agentic_index: noDataNumber(),
  min_tool_success_rate: noDataNumber(),
  max_tool_success_rate: noDataNumber(),
};

export const ModelsQuery = Type.Object(
  {
    offset: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: MAX_OFFSET }), Type.Null()])),
    // No cap beyond a 32-bit integer: the list is this installation's catalog, already in memory,
    // and a limit past its end returns it whole. A cap would be a 400 that the SDK's
    // models.listForUser maps to no error class (it maps 401, 403, 404 and 500 only).
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_OFFSET })),
    ...modelFilters,
    sort: Type.Optional(
      Type.String({
        maxLength: 256,
        description:
          "pricing-low-to-high, pricing-high-to-low or context-high-to-low; any other value keeps the id order",
      }),
    ),
  },
  { additionalProperties: true },
);

export const ModelsCountQuery = Type.Object(modelFilters, { additionalProperties: true });

/** Any text: an id no generation can have (empty, too long) is 404 (getGeneration maps no 400). */
export const GenerationQuery = Type.Object({ id: Type.String() });

export const ActivityQuery = Type.Object({
  date: Type.Optional(
    Type.String({
      pattern: "^\\d{4}-\\d{2}-\\d{2}$",
      description: "One UTC day (YYYY-MM-DD) in the last 30",
    }),
  ),
  api_key_hash: Type.Optional(Type.String({ pattern: "^[0-9a-fA-F]{64}$" })),
  user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  group_by: Type.Optional(Type.Enum(["workspace"])),
  workspace_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
});
