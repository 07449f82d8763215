import { Type, type TSchema } from "typebox";

/**
 * TypeBox pieces shared by the domain's wire records (whose TypeScript types are `Static<>` of
 * their schemas) and the HTTP schemas that reuse them.
 */

/** A value or null: `anyOf: [schema, {type: "null"}]`. */
export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** A string from a closed set, typed `{type: "string", enum}` so that responses serialise exactly. */
export const StringEnum = <T extends string>(values: readonly T[]) =>
  Type.Unsafe<T>({ type: "string", enum: [...values] });
