import { useEffect, useMemo, useState } from "preact/hooks";
import { call, errorText } from "../api/client.ts";
import type { AnalyticsMeta, AnalyticsQuery, AnalyticsResult } from "../api/types.ts";
import { Chart } from "../components/Chart.tsx";
import { DataTable, type Column } from "../components/DataTable.tsx";
import { CopyButton, ErrorNote, Loading } from "../components/ui.tsx";
import { dateColumn, runQuery, timeSeries } from "../lib/analytics.ts";
import { download, toCsv } from "../lib/csv.ts";
import { isoSeconds } from "../lib/format.ts";
import { navigate, useLocation } from "../lib/router.ts";

type Filter = NonNullable<AnalyticsQuery["filters"]>[number];
type Operator = Filter["operator"];
type Granularity = NonNullable<AnalyticsQuery["granularity"]>;

function defaultQuery(): AnalyticsQuery {
  const end = Math.ceil(Date.now() / 3_600_000) * 3_600_000;
  return {
    metrics: ["total_usage", "request_count"],
    dimensions: ["model"],
    granularity: "day",
    time_range: { start: isoSeconds(end - 7 * 86_400_000), end: isoSeconds(end) },
  };
}

/** The query of the URL (`?q=<JSON>`), so that a view can be shared; null when absent or unreadable. */
function queryFromUrl(search: URLSearchParams): AnalyticsQuery | null {
  const raw = search.get("q");
  if (!raw) return null;
  try {
    const q = JSON.parse(raw) as AnalyticsQuery;
    return Array.isArray(q.metrics) ? q : null;
  } catch {
    return null;
  }
}

/** datetime-local (minutes, shown as UTC) <-> the API's RFC 3339 with seconds. */
const toLocalInput = (iso: string | undefined) => (iso ? iso.slice(0, 16) : "");
const fromLocalInput = (v: string) => (v ? `${v}:00Z` : "");

export function Analytics() {
  const { search } = useLocation();
  const [meta, setMeta] = useState<AnalyticsMeta | null>(null);
  const urlQuery = queryFromUrl(search);
  const [draft, setDraft] = useState<AnalyticsQuery>(urlQuery ?? defaultQuery());
  const [result, setResult] = useState<{ query: AnalyticsQuery; data: AnalyticsResult } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  /** Bumped by Run when the query is the URL's already: the same query again, for fresh figures. */
  const [runs, setRuns] = useState(0);

  useEffect(() => {
    call("get", "/analytics/meta").then(
      (m) => setMeta(m.data),
      (e: unknown) => setError(errorText(e)),
    );
  }, []);

  // Runs whatever query the URL holds (on load, on Run, on back/forward).
  const qParam = search.get("q");
  useEffect(() => {
    const q = queryFromUrl(new URLSearchParams(location.search));
    if (!q) {
      // A first visit shows a useful default at once, under its own shareable URL.
      navigate(`/analytics?q=${encodeURIComponent(JSON.stringify(clean(draft)))}`, true);
      return;
    }
    setDraft(q);
    setBusy(true);
    setError(null);
    runQuery(q).then(
      (data) => {
        setResult({ query: q, data });
        setBusy(false);
      },
      (e: unknown) => {
        setResult(null);
        setError(errorText(e));
        setBusy(false);
      },
    );
  }, [qParam, runs]);

  const submit = (e: Event) => {
    e.preventDefault();
    const q = JSON.stringify(clean(draft));
    if (q === qParam) setRuns((n) => n + 1);
    else navigate(`/analytics?q=${encodeURIComponent(q)}`);
  };

  if (!meta) return error ? <ErrorNote error={error} /> : <Loading what="analytics metadata" />;
  const set = (patch: Partial<AnalyticsQuery>) => setDraft({ ...draft, ...patch });
  const dims = draft.dimensions ?? [];
  const filters = draft.filters ?? [];
  const json = JSON.stringify(clean(draft), null, 2);

  return (
    <section aria-labelledby="an-title">
      <h1 id="an-title">Analytics explorer</h1>
      <form class="explorer" onSubmit={submit}>
        <fieldset class="metrics">
          <legend>Metrics</legend>
          <div class="checks">
            {meta.metrics.map((m) => (
              <label key={m.name}>
                <input
                  type="checkbox"
                  name="metric"
                  value={m.name}
                  checked={draft.metrics.includes(m.name)}
                  onChange={(e) =>
                    set({
                      metrics: e.currentTarget.checked
                        ? [...draft.metrics, m.name]
                        : draft.metrics.filter((x) => x !== m.name),
                    })
                  }
                />{" "}
                {m.display_label}
              </label>
            ))}
          </div>
        </fieldset>
        <fieldset>
          <legend>Grouping and time</legend>
          <div class="row">
            {[0, 1].map((i) => (
              <label key={i}>
                Dimension {i + 1}
                <select
                  value={dims[i] ?? ""}
                  onChange={(e) => {
                    const next = [...dims];
                    next[i] = e.currentTarget.value;
                    set({ dimensions: next.filter(Boolean) });
                  }}
                >
                  <option value="">(none)</option>
                  {meta.dimensions.map((d) => (
                    <option value={d.name} key={d.name}>
                      {d.display_label}
                    </option>
                  ))}
                </select>
              </label>
            ))}
            <label>
              Granularity
              <select
                value={draft.granularity ?? ""}
                onChange={(e) => {
                  const g = e.currentTarget.value as Granularity | "";
                  const { granularity: _g, ...rest } = draft;
                  setDraft(g ? { ...rest, granularity: g } : rest);
                }}
              >
                <option value="">(none: totals)</option>
                {meta.granularities.map((g) => (
                  <option value={g.name} key={g.name}>
                    {g.display_label}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Start (UTC)
              <input
                type="datetime-local"
                value={toLocalInput(draft.time_range?.start)}
                onInput={(e) =>
                  set({
                    time_range: {
                      start: fromLocalInput(e.currentTarget.value),
                      end: draft.time_range?.end ?? isoSeconds(Date.now()),
                    },
                  })
                }
              />
            </label>
            <label>
              End (UTC)
              <input
                type="datetime-local"
                value={toLocalInput(draft.time_range?.end)}
                onInput={(e) =>
                  set({
                    time_range: {
                      start: draft.time_range?.start ?? isoSeconds(Date.now() - 86_400_000),
                      end: fromLocalInput(e.currentTarget.value),
                    },
                  })
                }
              />
            </label>
            <label>
              Limit
              <input
                type="number"
                min={1}
                value={draft.limit ?? ""}
                onInput={(e) => {
                  const v = e.currentTarget.value;
                  const { limit: _l, ...rest } = draft;
                  setDraft(v ? { ...rest, limit: Number(v) } : rest);
                }}
              />
            </label>
            <label>
              Order by
              <select
                value={draft.order_by ? `${draft.order_by.field} ${draft.order_by.direction}` : ""}
                onChange={(e) => {
                  const [field, direction] = e.currentTarget.value.split(" ");
                  const { order_by: _o, ...rest } = draft;
                  setDraft(
                    field ? { ...rest, order_by: { field, direction: direction as "asc" | "desc" } } : rest,
                  );
                }}
              >
                <option value="">(server default)</option>
                {[...draft.metrics, ...dims, ...(draft.granularity ? ["date"] : [])].flatMap((f) =>
                  (["desc", "asc"] as const).map((d) => (
                    <option key={`${f} ${d}`} value={`${f} ${d}`}>
                      {f} {d === "desc" ? "(high to low)" : "(low to high)"}
                    </option>
                  )),
                )}
              </select>
            </label>
          </div>
        </fieldset>
        <fieldset>
          <legend>Filters</legend>
          {filters.map((f, i) => (
            <div class="row" key={i}>
              <label>
                Field
                <select
                  value={f.field}
                  onChange={(e) =>
                    set({ filters: replaceAt(filters, i, { ...f, field: e.currentTarget.value }) })
                  }
                >
                  {meta.dimensions.map((d) => (
                    <option value={d.name} key={d.name}>
                      {d.display_label}
                    </option>
                  ))}
                </select>
              </label>
              <label>
                Operator
                <select
                  value={f.operator}
                  onChange={(e) => {
                    const operator = e.currentTarget.value as Operator;
                    set({
                      filters: replaceAt(filters, i, {
                        ...f,
                        operator,
                        value: coerce(meta, operator, f.value),
                      }),
                    });
                  }}
                >
                  {meta.operators.map((o) => (
                    <option value={o.name} key={o.name}>
                      {o.name}
                    </option>
                  ))}
                </select>
              </label>
              <label>
                Value{isArrayOp(meta, f.operator) ? " (comma-separated)" : ""}
                <input
                  value={Array.isArray(f.value) ? f.value.join(",") : String(f.value)}
                  onInput={(e) =>
                    set({
                      filters: replaceAt(filters, i, {
                        ...f,
                        value: coerce(meta, f.operator, e.currentTarget.value),
                      }),
                    })
                  }
                />
              </label>
              <button
                type="button"
                class="secondary"
                onClick={() => set({ filters: filters.filter((_, j) => j !== i) })}
              >
                Remove filter {i + 1}
              </button>
            </div>
          ))}
          <button
            type="button"
            class="secondary"
            onClick={() =>
              set({
                filters: [
                  ...filters,
                  { field: meta.dimensions[0]?.name ?? "model", operator: "eq", value: "" },
                ],
              })
            }
          >
            Add filter
          </button>
        </fieldset>
        <div class="row">
          <button type="submit" disabled={busy || draft.metrics.length === 0}>
            {busy ? "Running…" : "Run query"}
          </button>
        </div>
        <details open>
          <summary>Query JSON (POST /api/v1/analytics/query)</summary>
          <pre id="query-json" tabIndex={0}>
            {json}
          </pre>
          <CopyButton text={json} label="Copy query JSON" />
        </details>
      </form>
      <ErrorNote error={error} />
      {result && <Result meta={meta} query={result.query} data={result.data} />}
    </section>
  );
}

function Result({
  meta,
  query,
  data,
}: {
  meta: AnalyticsMeta;
  query: AnalyticsQuery;
  data: AnalyticsResult;
}) {
  const metricMeta = new Map(meta.metrics.map((m) => [m.name, m]));
  const dateKey = dateColumn(query.granularity);
  const dims = query.dimensions ?? [];
  const present = new Set(data.data.flatMap((r) => Object.keys(r)));
  const columns: Column[] = [
    ...(dateKey ? [{ key: dateKey, label: "Time (UTC)" }] : []),
    ...dims.map((d) => ({ key: d, label: meta.dimensions.find((x) => x.name === d)?.display_label ?? d })),
    ...[...present]
      .filter((k) => k !== dateKey && !dims.includes(k) && !metricMeta.has(k))
      .map((k) => ({ key: k, label: k })),
    ...query.metrics.map((m) => ({
      key: m,
      label: metricMeta.get(m)?.display_label ?? m,
      format: metricMeta.get(m)?.display_format ?? "number",
      numeric: true,
    })),
  ];
  const metric = query.metrics[0] ?? "";
  const format = metricMeta.get(metric)?.display_format;
  const label = metricMeta.get(metric)?.display_label ?? metric;
  const chart = useMemo(() => {
    if (dateKey) return timeSeries(data.data, dateKey, metric, dims[0] ?? null);
    const rows = data.data.slice(0, 30);
    return {
      x: rows.map((r) => (dims.length ? dims.map((d) => String(r[d] ?? "(unset)")).join(" / ") : "total")),
      series: [{ label, values: rows.map((r) => (typeof r[metric] === "number" ? r[metric] : null)) }],
    };
  }, [data]);

  return (
    <section aria-labelledby="result-title" class="result">
      <h2 id="result-title">Result</h2>
      <p class="meta" id="result-meta">
        {data.metadata.row_count} rows in {data.metadata.query_time_ms} ms
        {data.cachedAt ? `, from the cache (computed ${new Date(data.cachedAt).toISOString()})` : ""}.
        {data.metadata.truncated && (
          <strong class="warn" id="truncated">
            {" "}
            Truncated: the result was cut at the limit; raise the limit or narrow the query.
          </strong>
        )}
      </p>
      {(data.warnings ?? []).length > 0 && (
        <ul class="warnings" aria-label="Warnings from the API">
          {(data.warnings ?? []).map((w) => (
            <li key={w}>Warning: {w}</li>
          ))}
        </ul>
      )}
      <Chart
        title={`${label}${dateKey ? " over time" : ""}${dims[0] ? ` by ${dims[0]}` : ""}`}
        x={chart.x}
        series={chart.series}
        format={format}
      />
      <div class="row">
        <button
          type="button"
          onClick={() =>
            download(
              "gatehouse-analytics.csv",
              toCsv(
                columns.map((c) => c.key),
                data.data,
              ),
            )
          }
        >
          Export CSV
        </button>
      </div>
      <DataTable caption="Result rows" columns={columns} rows={data.data} />
    </section>
  );
}

const replaceAt = <T,>(list: T[], i: number, v: T) => list.map((x, j) => (j === i ? v : x));
const isArrayOp = (meta: AnalyticsMeta, op: string) =>
  meta.operators.find((o) => o.name === op)?.value_type === "array";

function coerce(meta: AnalyticsMeta, op: string, v: Filter["value"]): Filter["value"] {
  const text = Array.isArray(v) ? v.join(",") : String(v);
  if (isArrayOp(meta, op))
    return text
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
  return /^-?\d+(\.\d+)?$/.test(text) && ["gt", "gte", "lt", "lte"].includes(op) ? Number(text) : text;
}

/** The query as sent: empty optional parts dropped. */
function clean(q: AnalyticsQuery): AnalyticsQuery {
  const out: AnalyticsQuery = { ...q };
  if (!out.dimensions?.length) delete out.dimensions;
  if (!out.filters?.length) delete out.filters;
  return out;
}
