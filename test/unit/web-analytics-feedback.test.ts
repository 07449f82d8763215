import { resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { analyticsMeta } from "../../src/analytics/model/meta.js";
import type { AnalyticsMeta, AnalyticsQuery, AnalyticsRow } from "../../web/src/api/types.js";
import { timeSeries } from "../../web/src/lib/analytics.js";

const WEB = resolve(import.meta.dirname, "../../web");

/**
 * The dashboard's analytics explorer (web/src/pages/Analytics.tsx) with the feedback metrics: it
 * lists whatever GET /analytics/meta lists and sends metric names as strings, so the new metrics
 * need no code of their own there; these tests hold it to that.
 */
describe("the dashboard's analytics explorer and the feedback metrics", () => {
  it("the dashboard type-checks against the API types generated from the server (web/tsconfig.json)", () => {
    const file = ts.readConfigFile(resolve(WEB, "tsconfig.json"), (p) => ts.sys.readFile(p));
    const parsed = ts.parseJsonConfigFileContent(file.config, ts.sys, WEB);
    const program = ts.createProgram(parsed.fileNames, parsed.options);
    const problems = ts
      .getPreEmitDiagnostics(program)
      .map((d) => `${d.file?.fileName ?? ""}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`);
    expect(problems).toEqual([]);
    expect(parsed.fileNames.some((f) => f.endsWith("pages/Analytics.tsx"))).toBe(true);
  }, 180_000);

  it("the meta the server answers is the explorer's meta type; a feedback query is an explorer query; the chart plots it", () => {
    const meta: AnalyticsMeta = analyticsMeta();
    const feedback = meta.metrics.filter((m) => m.name.startsWith("feedback_"));
    expect(feedback).toHaveLength(8);
    expect(feedback[0]).toEqual({
      name: "feedback_count",
      display_label: "Feedback Count",
      is_rate: false,
      display_format: "number",
    });
    const query: AnalyticsQuery = {
      metrics: ["feedback_count", "feedback_latency_count"],
      dimensions: ["api"],
      granularity: "day",
      order_by: { field: "feedback_count", direction: "desc" },
      time_range: { start: "2026-11-15T00:00:00Z", end: "2026-11-18T00:00:00Z" },
    };
    const rows: AnalyticsRow[] = [
      { api: "chat", date__day: "2026-11-16T00:00:00.000Z", feedback_count: 3, feedback_latency_count: 2 },
      { api: "chat", date__day: "2026-11-17T00:00:00.000Z", feedback_count: 0, feedback_latency_count: 0 },
      {
        api: "messages",
        date__day: "2026-11-17T00:00:00.000Z",
        feedback_count: 1,
        feedback_latency_count: 1,
      },
    ];
    const chart = timeSeries(rows, "date__day", query.metrics[0]!, "api");
    expect(chart).toEqual({
      x: [Date.parse("2026-11-16T00:00:00Z") / 1000, Date.parse("2026-11-17T00:00:00Z") / 1000],
      series: [
        { label: "chat", values: [3, 0] },
        { label: "messages", values: [null, 1] },
      ],
    });
  });
});
