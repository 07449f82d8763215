/**
 * Timestamps on the wire: RFC 3339 UTC with seconds. Request timestamps must carry seconds and an
 * offset; minute precision is rejected.
 */
export const RFC3339_SECONDS_RE =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/** Strict UTC form required by `time_range` and `expires_at`: seconds, optional fraction, `Z`. */
export const UTC_SECONDS_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

/** Parses a timestamp that already matched one of the patterns above; null when the date is impossible. */
export function parseTimestamp(s: string): Date | null {
  const m = RFC3339_SECONDS_RE.exec(s);
  if (!m) return null;
  const d = new Date(s);
  if (Number.isNaN(d.getTime())) return null;
  // Reject impossible calendar dates that Date would roll over (2026-02-30).
  const [, y, mo, da] = m;
  const probe = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(da)));
  if (probe.getUTCDate() !== Number(da) || probe.getUTCMonth() !== Number(mo) - 1) return null;
  return d;
}

export const iso = (d: Date): string => d.toISOString();
