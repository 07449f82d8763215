import { Type, type TSchema } from "typebox";
import { MAX_USD } from "../../lib/money.js";

/** Shared schema pieces. Request bodies are validated strictly (no coercion); see validation.ts. */
export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

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

/** Offset pagination query: `offset` >= 0 (default 0), `limit` 1..100 (default 50). */
export const PageQuery = {
  offset: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
};
