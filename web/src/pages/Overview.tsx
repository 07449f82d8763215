import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { errorText } from "../api/client.ts";
import type { AnalyticsQuery, AnalyticsResult } from "../api/types.ts";
import { Chart } from "../components/Chart.tsx";
import { DataTable } from "../components/DataTable.tsx";
import { ErrorNote, Loading } from "../components/ui.tsx";
import { runQuery, timeSeries } from "../lib/analytics.ts";
import { isoSeconds, pct, usd, utc } from "../lib/format.ts";

const RANGES = [
  { id: "24h", label: "Last 24 hours", ms: 86_400_000, granularity: "hour" as const },
  { id: "7d", label: "Last 7 days", ms: 7 * 86_400_000, granularity: "day" as const },
  { id: "30d", label: "Last 30 days", ms: 30 * 86_400_000, granularity: "day" as const },
];

const TOPS = [
  { dim: "model", title: "Top models" },
  { dim: "api_key_id", title: "Top keys" },
  { dim: "app", title: "Top apps" },
  { dim: "user", title: "Top users" },
] as const;

interface Data {
  series: AnalyticsResult;
  tops: AnalyticsResult[];
  byok: AnalyticsResult;
  fetchedAt: number;
}

const TITLES = { total_usage: "Spend", request_count: "Requests", tokens_total: "Tokens" } as const;

/** Marks the Overview as fully drawn (the bench reads this mark with the Performance API). */
export const DRAWN_MARK = "gatehouse:overview-drawn";

export function Overview() {
  const [rangeId, setRange] = useState("7d");
  const range = RANGES.find((r) => r.id === rangeId) ?? RANGES[1]!;
  const [data, setData] = useState<Data | null>(null);
  const [error, setError] = useState<string | null>(null);
  const charts = useRef(new Set<string>());

  useEffect(() => {
    let live = true;
    setData(null);
    setError(null);
    charts.current.clear();
    // Whole seconds, end rounded up to the next minute so that repeated loads hit the API's cache.
    const end = Math.ceil(Date.now() / 60_000) * 60_000;
    const time_range = { start: isoSeconds(end - range.ms), end: isoSeconds(end) };
    const q = (extra: Partial<AnalyticsQuery>): AnalyticsQuery => ({ metrics: [], time_range, ...extra });
    Promise.all([
      runQuery(
        q({ metrics: ["total_usage", "request_count", "tokens_total"], granularity: range.granularity }),
      ),
      Promise.all(
        TOPS.map((t) =>
          runQuery(
            q({
              metrics: ["total_usage", "request_count"],
              dimensions: [t.dim],
              order_by: { field: "total_usage", direction: "desc" },
              limit: 5,
            }),
          ),
        ),
      ),
      runQuery(q({ metrics: ["total_usage", "byok_usage", "request_count", "byok_request_count"] })),
    ]).then(
      ([series, tops, byok]) => live && setData({ series, tops, byok, fetchedAt: Date.now() }),
      (e: unknown) => live && setError(errorText(e)),
    );
    return () => {
      live = false;
    };
  }, [rangeId]);

  const key = `date__${range.granularity}`;
  const lines = useMemo(
    () =>
      data
        ? (["total_usage", "request_count", "tokens_total"] as const).map((m) => ({
            metric: m,
            ...timeSeries(data.series.data, key, m, null),
          }))
        : [],
    [data],
  );

  // Every chart reports its draw; the tables are rendered in the same commit.
  const chartDrawn = (name: string) => {
    charts.current.add(name);
    if (charts.current.size === 3 && !performance.getEntriesByName(DRAWN_MARK).length) {
      performance.mark(DRAWN_MARK);
    }
  };

  const byok = data?.byok.data[0];
  const total = Number(byok?.total_usage ?? 0);
  const byokUsd = Number(byok?.byok_usage ?? 0);
  const cachedAt = data
    ? Math.min(...[data.series, data.byok, ...data.tops].map((r) => r.cachedAt ?? data.fetchedAt))
    : 0;
  const lastBucket = data?.series.data.reduce<string | null>((m, r) => {
    const d = String(r[key] ?? "");
    return m === null || d > m ? d : m;
  }, null);

  return (
    <section aria-labelledby="overview-title">
      <div class="page-head">
        <h1 id="overview-title">Overview</h1>
        <label>
          Range{" "}
          <select value={rangeId} onChange={(e) => setRange(e.currentTarget.value)}>
            {RANGES.map((r) => (
              <option value={r.id} key={r.id}>
                {r.label}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorNote error={error} />
      {!data && !error && <Loading what="the overview" />}
      {data && (
        <>
          <p class="freshness" id="freshness">
            Figures as of {utc(new Date(cachedAt).toISOString())}
            {cachedAt < data.fetchedAt - 1000
              ? ` (served from the analytics cache, computed ${Math.round((data.fetchedAt - cachedAt) / 1000)} s before this page loaded)`
              : " (computed for this page)"}
            . Newest activity bucket: {utc(lastBucket)}. Generations appear here as soon as they are ingested;
            cached answers are dropped when new activity arrives.
          </p>
          <div class="cards">
            <Card label="Spend" value={usd(total)} />
            <Card label="Requests" value={Number(byok?.request_count ?? 0).toLocaleString("en-US")} />
            <Card label="BYOK share of spend" value={total > 0 ? pct(byokUsd / total) : "–"} />
            <Card
              label="BYOK share of requests"
              value={
                Number(byok?.request_count ?? 0) > 0
                  ? pct(Number(byok?.byok_request_count ?? 0) / Number(byok?.request_count))
                  : "–"
              }
            />
          </div>
          <div class="grid3">
            {lines.map((l) => (
              <Chart
                key={l.metric}
                title={TITLES[l.metric]}
                x={l.x}
                series={l.series.map((s) => ({ ...s, label: TITLES[l.metric] }))}
                format={l.metric === "total_usage" ? "currency" : "number"}
                height={180}
                onDrawn={() => chartDrawn(l.metric)}
              />
            ))}
          </div>
          <div class="grid2">
            {TOPS.map((t, i) => (
              <DataTable
                key={t.dim}
                caption={t.title}
                columns={[
                  { key: t.dim, label: t.title.replace("Top ", "").replace(/s$/, "") },
                  { key: "total_usage", label: "Spend", format: "currency", numeric: true },
                  { key: "request_count", label: "Requests", format: "number", numeric: true },
                ]}
                rows={data.tops[i]?.data ?? []}
              />
            ))}
          </div>
        </>
      )}
    </section>
  );
}

function Card({ label, value }: { label: string; value: string }) {
  return (
    <div class="card">
      <div class="card-label">{label}</div>
      <div class="card-value">{value}</div>
    </div>
  );
}
