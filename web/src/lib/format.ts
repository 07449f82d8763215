/** Any API value as text (objects as JSON). */
export function text(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean" || typeof v === "bigint") return String(v);
  return JSON.stringify(v);
}

/** Number and date formats of the dashboard (en-US, UTC: the API's windows are UTC). */
const usdFmt = new Intl.NumberFormat("en-US", {
  style: "currency",
  currency: "USD",
  maximumFractionDigits: 2,
});
const usdSmall = new Intl.NumberFormat("en-US", {
  style: "currency",
  currency: "USD",
  maximumFractionDigits: 6,
});
const intFmt = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
const numFmt = new Intl.NumberFormat("en-US", { maximumFractionDigits: 2 });
const compact = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });

export const usd = (v: number) => (Math.abs(v) > 0 && Math.abs(v) < 0.01 ? usdSmall : usdFmt).format(v);
export const int = (v: number) => intFmt.format(v);
export const num = (v: number) => numFmt.format(v);
export const short = (v: number) => compact.format(v);
export const pct = (v: number) => `${numFmt.format(v * 100)} %`;

/** A value of an analytics metric by its display_format from /analytics/meta. */
export function metricValue(format: string | undefined, v: unknown): string {
  if (v === null || v === undefined) return "–";
  if (typeof v !== "number") return text(v);
  switch (format) {
    case "currency":
      return usd(v);
    case "percent":
      return pct(v);
    case "latency":
      return `${num(v)} ms`;
    case "throughput":
      return `${num(v)} tok/s`;
    default:
      return Number.isInteger(v) ? int(v) : num(v);
  }
}

export const utc = (iso: string | null | undefined) =>
  iso ? `${iso.replace("T", " ").replace(/\.\d+Z$|Z$/, "")} UTC` : "–";

/** RFC 3339 with seconds, as analytics time ranges require. */
export const isoSeconds = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

/** An API timestamp as the value of a `datetime-local` input read as UTC (`2027-01-31T23:59:59`). */
export const utcInputValue = (iso: string | null | undefined) => (iso ? iso.slice(0, 19) : "");

/** A `datetime-local` value read as UTC, as the API wants it (`…T23:59:00Z`); empty → null. */
export const fromUtcInput = (v: string): string | null =>
  v === "" ? null : `${v.length === 16 ? `${v}:00` : v.slice(0, 19)}Z`;
