import type { ColumnName, ColumnsOfKind, MoneyColumnName } from "../../activity/activity-row.js";

/*
 * The columns of the activity store's `generations` table that the model may reference, by role,
 * computed from the field table (src/activity/generation-fields.ts) through ActivityRow: a field
 * added there is a column analytics can name, of the role its storage kind gives it. The
 * compiler emits identifiers only from these names (never from a request), so they are the whole
 * identifier surface of analytics SQL. `created_at` is the stored timestamp of
 * ActivityRow.created_at_ms.
 */

export type MoneyColumn = MoneyColumnName;
/** Integer id columns that dimensions group on. */
export type IdColumn = ColumnsOfKind<"int64?"> | "api_key_id";
/** Integer counts (the token columns): every int64 column that is neither money nor an id. */
export type TokenColumn = Exclude<ColumnsOfKind<"int64">, MoneyColumn | "api_key_id">;
/** Summable columns: exact 64-bit integers. */
export type SumColumn = TokenColumn | MoneyColumn;
export type FloatColumn = ColumnsOfKind<"float64" | "float64?">;
export type FlagColumn = ColumnsOfKind<"bool">;
export type TextColumn = ColumnsOfKind<"string" | "string?">;
export type GenerationColumn = Exclude<ColumnName, "created_at_ms"> | "created_at";
