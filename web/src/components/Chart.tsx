import uPlot, { type AlignedData, type Options } from "uplot";
import "uplot/dist/uPlot.min.css";
import { useEffect, useRef } from "preact/hooks";
import { metricValue, short } from "../lib/format.ts";

export interface Series {
  label: string;
  values: (number | null)[];
}

export interface ChartProps {
  title: string;
  /** Unix seconds (a time series) or category labels (bars, one per label). */
  x: number[] | string[];
  series: Series[];
  format?: string;
  height?: number;
  /** Called after every draw (the Overview measures when its charts are drawn). */
  onDrawn?: () => void;
}

/** Colours with at least 3:1 contrast against the white plot area. */
export const PALETTE = [
  "#1f5fbf",
  "#b3470b",
  "#1d7a3a",
  "#8a2da8",
  "#a3114e",
  "#00707a",
  "#6b5800",
  "#4a4a4a",
];

/**
 * A uPlot chart in a labelled figure. The plotted numbers are also in the figure's `data-points`
 * attribute (x and each series), which the browser tests compare with the API's answer.
 */
export function Chart({ title, x, series, format, height = 220, onDrawn }: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const drawn = useRef(onDrawn);
  drawn.current = onDrawn;
  const categorical = typeof x[0] === "string";

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const xs = categorical ? x.map((_, i) => i) : (x as number[]);
    const data = [xs, ...series.map((s) => s.values)] as AlignedData;
    const bars = uPlot.paths.bars?.({ size: [0.6, 60] });
    const opts: Options = {
      width: Math.max(240, el.clientWidth),
      height,
      legend: { show: series.length > 1 || !categorical },
      cursor: { drag: { x: false, y: false } },
      // The API's buckets are UTC days, weeks and hours: axis and legend show UTC, like the tables,
      // not the browser's time zone (where a day bucket would start at 16:00 the day before).
      tzDate: (ts: number) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
      // Every metric charted is a non-negative total or average: its axis starts at zero, so that
      // a dip is drawn at its true size (uPlot's default starts near the data's minimum).
      scales: {
        x: { time: !categorical },
        y: { range: { min: { pad: 0.1, soft: 0, mode: 1 }, max: { pad: 0.1, soft: 0, mode: 3 } } },
      },
      axes: [
        {
          stroke: "#333",
          grid: { stroke: "#e4e4e4" },
          ...(categorical
            ? {
                values: (_u: uPlot, splits: number[]) =>
                  splits.map((i) => {
                    const s = (x as string[])[Math.round(i)] ?? "";
                    return Number.isInteger(i) ? (s.length > 14 ? `${s.slice(0, 13)}…` : s) : "";
                  }),
              }
            : {}),
        },
        {
          stroke: "#333",
          grid: { stroke: "#e4e4e4" },
          size: 64,
          values: (_u: uPlot, splits: number[]) =>
            splits.map((v) => (format === "currency" ? `$${short(v)}` : short(v))),
        },
      ],
      series: [
        { label: categorical ? "" : "Time (UTC)" },
        ...series.map((s, i) => ({
          label: s.label,
          stroke: PALETTE[i % PALETTE.length],
          width: 2,
          ...(categorical && bars
            ? { paths: bars, fill: PALETTE[i % PALETTE.length], points: { show: false } }
            : {}),
          value: (_u: uPlot, v: number | null) => metricValue(format, v),
        })),
      ],
      hooks: { draw: [() => drawn.current?.()] },
    };
    const plot = new uPlot(opts, data, el);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(240, el.clientWidth), height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [x, series, format, height, categorical]);

  return (
    <figure class="chart" data-points={JSON.stringify({ x, series })}>
      <figcaption>{title}</figcaption>
      <div
        ref={box}
        class="chart-box"
        role="img"
        aria-label={`${title} chart; the same numbers are in the table`}
      />
    </figure>
  );
}
