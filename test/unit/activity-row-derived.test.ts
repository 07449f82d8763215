import { describe, expect, expectTypeOf, it } from "vitest";
import {
  ACTIVITY_COLUMNS,
  FIRST_STORAGE_ORDER,
  MONEY_COLUMNS,
  type ActivityRow,
} from "../../src/activity/activity-row.js";
import { DERIVED_COLUMNS, GENERATION_FIELDS } from "../../src/activity/generation-fields.js";
import type { MoneyColumn, SumColumn, TokenColumn } from "../../src/analytics/model/columns.js";
import type { OutboxRow } from "../../src/broadcast/payload-rows.js";
import { ADDED_GENERATION_COLUMNS, GENERATION_COLUMNS } from "../../src/stores/activity-columns.js";

const tableColumns = [
  ...GENERATION_FIELDS.flatMap((f) => ("column" in f.target ? [f.target.column as string] : [])),
  ...Object.keys(DERIVED_COLUMNS),
];

describe("the stored row is derived from the field table", () => {
  it("ACTIVITY_COLUMNS holds each column of the table once: the first schema's, then those added", () => {
    expect(new Set(ACTIVITY_COLUMNS).size).toBe(ACTIVITY_COLUMNS.length);
    expect([...ACTIVITY_COLUMNS].sort()).toEqual([...tableColumns].sort());
    // Existing DuckDB files are appended to by position: the order is the first schema's.
    expect(ACTIVITY_COLUMNS.slice(0, 4)).toEqual(["organization_id", "id", "created_at_ms", "api_key_id"]);
    expect(ACTIVITY_COLUMNS.slice(0, FIRST_STORAGE_ORDER.length)).toEqual(FIRST_STORAGE_ORDER);
    expect(FIRST_STORAGE_ORDER.at(-1)).toBe("throughput");
    // Added since, each nullable (rows stored before hold no value), after the first schema's.
    expect(ACTIVITY_COLUMNS.slice(FIRST_STORAGE_ORDER.length)).toEqual(["api"]);
    for (const c of ADDED_GENERATION_COLUMNS) expect(c.kind.endsWith("?")).toBe(true);
    expect(GENERATION_COLUMNS.map((c) => c.field)).toEqual(ACTIVITY_COLUMNS);
  });

  it("money columns are the `usd` fields, bigint in the row, and summable in analytics", () => {
    const usd = GENERATION_FIELDS.filter((f) => f.check.type === "usd").map((f) => `${f.wire}_nano`);
    expect([...MONEY_COLUMNS].sort()).toEqual(usd.sort());
    expectTypeOf<ActivityRow["usage_nano"]>().toEqualTypeOf<bigint>();
    expectTypeOf<ActivityRow["usage_data_nano"]>().toEqualTypeOf<bigint>();
    expectTypeOf<"usage_nano">().toMatchTypeOf<MoneyColumn>();
    expectTypeOf<"tokens_prompt">().toMatchTypeOf<TokenColumn>();
    expectTypeOf<"byok_usage_inference_nano">().toMatchTypeOf<SumColumn>();
  });

  it("each column's type follows its storage kind", () => {
    expectTypeOf<ActivityRow["tokens_prompt"]>().toEqualTypeOf<number>();
    expectTypeOf<ActivityRow["workspace_id"]>().toEqualTypeOf<string | null>();
    expectTypeOf<ActivityRow["generation_time_ms"]>().toEqualTypeOf<number | null>();
    expectTypeOf<ActivityRow["is_byok"]>().toEqualTypeOf<boolean>();
    expectTypeOf<ActivityRow["throughput"]>().toEqualTypeOf<number | null>();
    expectTypeOf<ActivityRow["api_key_id"]>().toEqualTypeOf<number>();
    expectTypeOf<OutboxRow["usage_nano"]>().toEqualTypeOf<bigint>();
    expectTypeOf<keyof ActivityRow>().toEqualTypeOf<(typeof ACTIVITY_COLUMNS)[number]>();
  });
});
