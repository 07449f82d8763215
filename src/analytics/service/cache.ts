import type { AnalyticsResult } from "./run-query.js";

interface Entry {
  version: bigint;
  storedAtMs: number;
  result: AnalyticsResult;
}

/**
 * Recent results per organization and request, in process. An entry serves identical requests
 * until its TTL passes or the organization's activity version moves (new activity ingested).
 * Bounded: the oldest entries are evicted first.
 */
export class AnalyticsCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 500,
  ) {}

  get(key: string, version: bigint, nowMs: number): { result: AnalyticsResult; cachedAt: number } | null {
    const e = this.entries.get(key);
    if (!e) return null;
    if (e.version !== version || nowMs - e.storedAtMs >= this.ttlMs || nowMs < e.storedAtMs) {
      this.entries.delete(key);
      return null;
    }
    return { result: e.result, cachedAt: e.storedAtMs };
  }

  set(key: string, version: bigint, nowMs: number, result: AnalyticsResult): void {
    if (this.ttlMs <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, { version, storedAtMs: nowMs, result });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }
}

/** A stable cache key: the organization and the request with object keys sorted. */
export function cacheKey(organizationId: string, body: unknown): string {
  const canon = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canon)
      : v !== null && typeof v === "object"
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, canon((v as Record<string, unknown>)[k])]),
          )
        : v;
  return `${organizationId}\n${JSON.stringify(canon(body))}`;
}
