import { Type } from "typebox";
import { MAX_USD } from "../../lib/money.js";
import { Nullable } from "../../lib/typebox.js";

/** Shared schema pieces. Request bodies are validated strictly (no coercion); see validation.ts. */
export { Nullable };

/** A USD amount in a request: a finite JSON number from 0 to 1e9. */
export const UsdAmount = Type.Number({ minimum: 0, maximum: MAX_USD });

export const Uuid = Type.String({ format: "uuid" });

export const ErrorResponse = Type.Object(
  {
    error: Type.Object({
      code: Type.Integer(),
      message: Type.String(),
      metadata: Nullable(Type.Record(Type.String(), Type.Unknown())),
    }),
  },
  { $id: undefined },
);

export const DeletedResponse = Type.Object({ deleted: Type.Literal(true) });

/** The largest `offset`: a 32-bit integer, which every store binds without overflow. */
export const MAX_OFFSET = 2_147_483_647;

/** Offset pagination query: `offset` 0..MAX_OFFSET (default 0), `limit` 1..100 (default 50). */
export const PageQuery = {
  offset: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: MAX_OFFSET }), Type.Null()])),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
};

/**
 * Any JSON object: the body of an API surface whose translation (src/gateway/surfaces/) checks
 * every field and names the one at fault; the schema makes the edge's checks apply (nesting depth,
 * NUL characters).
 */
export const AnyObjectBody = Type.Object({}, { additionalProperties: true });
