/**
 * Running totals by label set, kept as plain numbers on the paths that count them and handed to
 * Prometheus counters only when they are scraped (gatehouse-metrics.ts). prom-client's own
 * `inc(labels)` hashes the label object on every call (0.3-0.6 µs on the 2-core VM of
 * docs/performance.md); a model request counts about ten things, so counting through it would
 * add several microseconds to every request for a scrape every few seconds. Here a count is one
 * Map lookup on a key the caller builds from a few strings, and the label object is made once per
 * label set.
 *
 * Label values must come from bounded sets (route patterns, status codes, the catalog's models and
 * providers, destination types): every distinct set stays in memory, as in any Prometheus client.
 */
export class Tallies<L extends string, F extends string> {
  private readonly rows = new Map<string, { labels: Record<L, string>; values: Record<F, number> }>();

  constructor(private readonly fields: readonly F[]) {}

  /** The totals of one label set (made on first use); add to its fields. */
  of(key: string, labels: () => Record<L, string>): Record<F, number> {
    let row = this.rows.get(key);
    if (!row) {
      const values = {} as Record<F, number>;
      for (const f of this.fields) values[f] = 0;
      row = { labels: labels(), values };
      this.rows.set(key, row);
    }
    return row.values;
  }

  /** Every label set with its totals. */
  entries(): IterableIterator<{ labels: Record<L, string>; values: Record<F, number> }> {
    return this.rows.values();
  }
}
