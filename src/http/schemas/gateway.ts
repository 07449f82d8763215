import { Type } from "typebox";
import { MAX_OFFSET } from "./common.js";

/** Query schemas of the data plane's read routes (dataplane-facts.md §6, §7, §9). */
/** The catalog filters /models, /models/count and /models/user take. */
const modelFilters = {
  /** Comma-separated: only models that honour every one (on one endpoint). */
  supported_parameters: Type.Optional(Type.String({ maxLength: 1024 })),
  /** Comma-separated: only models that output one of them (`all`: any). */
  output_modalities: Type.Optional(Type.String({ maxLength: 1024 })),
};

export const ModelsQuery = Type.Object(
  {
    offset: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: MAX_OFFSET }), Type.Null()])),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    ...modelFilters,
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
  api_key_hash: Type.Optional(Type.String({ pattern: "^[0-9a-f]{64}$" })),
  user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  group_by: Type.Optional(Type.Enum(["workspace"])),
  workspace_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
});
