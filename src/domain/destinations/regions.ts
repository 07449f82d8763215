import { invalid } from "../errors.js";

export type DataRegion = "global" | "europe" | "us";
export type DataRegionInput = DataRegion | "eu";

export const DEFAULT_REGIONS: DataRegion[] = ["global"];

/** `eu` is an alias of `europe`; duplicates collapse (first occurrence kept); never empty. */
export function normalizeRegions(input: DataRegionInput[]): DataRegion[] {
  if (input.length === 0) throw invalid("regions: at least 1 item");
  return [...new Set(input.map((r): DataRegion => (r === "eu" ? "europe" : r)))];
}
