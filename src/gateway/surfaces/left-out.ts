/**
 * The response header naming what a translation between API shapes left out (hosted tools its
 * provider cannot run, fields with no counterpart): `x-gatehouse-left-out`, comma-separated.
 * Absent when nothing was left out. The names are header-safe already (the translations cut
 * them to a safe alphabet and length).
 */
export const LEFT_OUT_HEADER = "x-gatehouse-left-out";

export function leftOutHeader(leftOut: readonly string[]): Record<string, string> {
  return leftOut.length === 0 ? {} : { [LEFT_OUT_HEADER]: leftOut.join(", ") };
}
