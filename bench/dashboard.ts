/**
 * `npm run bench:dashboard`: the dashboard's first-load size and how fast the Overview draws.
 *
 * 1. First load: the compressed bytes (brotli and gzip, as served from the precompressed files)
 *    of index.html's JavaScript and CSS, fetched over HTTP from the real server. Target <= 200 KB.
 * 2. Overview: on the default `gatehouse demo` (200,000 generations over 30 days; override with
 *    BENCH_GENERATIONS), the time from navigation start to the page's "overview drawn" mark (set
 *    when the three charts have drawn; the tables render in the same commit), read in the browser
 *    with the Performance API. The analytics cache is off (ANALYTICS_CACHE_TTL_MS=0), so every
 *    load runs its six queries. Baseline in the same run: the same six queries sent by Node
 *    directly (the API's share of the time). Target <= 1.5 s.
 */
import { readFileSync } from "node:fs";
import { get } from "node:http";
import { join } from "node:path";
import { browserUnavailable, launchBrowser, startDemoServer, WEB_DIR } from "../test/helpers/dashboard.js";

const RUNS = 5;
const MARK = "gatehouse:overview-drawn";
const generations = Number(process.env.BENCH_GENERATIONS ?? 200_000);
const reason = browserUnavailable();
if (reason) throw new Error(reason);

function wireBytes(url: string, encoding: string): Promise<{ encoding: string; bytes: number }> {
  return new Promise((done, fail) => {
    get(url, { headers: { "accept-encoding": encoding } }, (res) => {
      let bytes = 0;
      res.on("data", (b: Buffer) => (bytes += b.length));
      res.on("end", () => done({ encoding: res.headers["content-encoding"] ?? "identity", bytes }));
    }).on("error", fail);
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

process.stdout.write(`seeding the demo (${generations.toLocaleString("en-US")} generations)…\n`);
const server = await startDemoServer({
  generations,
  days: 30,
  env: { ANALYTICS_CACHE_TTL_MS: "0", RATE_LIMIT_ANALYTICS_MAX: "100000" },
});
const { context, close } = await launchBrowser();
try {
  // 1. First-load bytes.
  const html = readFileSync(join(WEB_DIR, "index.html"), "utf8");
  const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]!);
  const sizes: Record<string, number> = { br: 0, gzip: 0, identity: 0 };
  for (const enc of Object.keys(sizes)) {
    for (const a of assets) {
      // node:http, not fetch: fetch would decompress and hide the bytes on the wire.
      const { encoding: got, bytes } = await wireBytes(`${server.origin}${a}`, enc);
      if (got !== enc) throw new Error(`${a}: asked for ${enc}, got ${got}`);
      sizes[enc]! += bytes;
    }
  }
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  process.stdout.write(
    `first load (${assets.length} files: ${assets.join(", ")}):\n` +
      `  brotli ${kb(sizes.br!)}, gzip ${kb(sizes.gzip!)}, uncompressed ${kb(sizes.identity!)}; ` +
      `gzip / 200 KB target = ${(sizes.gzip! / (200 * 1024)).toFixed(2)}\n`,
  );

  // 2. Overview drawn, measured in the browser.
  const page = await context.newPage();
  await page.addInitScript(
    (key: string) => sessionStorage.setItem("gatehouse.managementKey", key),
    server.key,
  );
  const drawn: number[] = [];
  for (let i = 0; i < RUNS + 1; i++) {
    await page.goto(`${server.origin}/`);
    // Strings, not functions: tsx's transform would add helpers the page does not have.
    // Polled from here: waitForFunction evaluates a string in the page, which the CSP forbids.
    let ms = NaN;
    for (let t = 0; t < 3000 && Number.isNaN(ms); t++) {
      ms = Number(await page.evaluate(`performance.getEntriesByName("${MARK}")[0]?.startTime ?? NaN`));
      if (Number.isNaN(ms)) await new Promise((r) => setTimeout(r, 10));
    }
    if (i > 0) drawn.push(ms); // the first load warms Chromium's and DuckDB's caches
  }

  // Baseline: the Overview's six queries straight from Node, in parallel as the page sends them.
  const end = Math.ceil(Date.now() / 60_000) * 60_000;
  const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
  const time_range = { start: iso(end - 7 * 86_400_000), end: iso(end) };
  const bodies = [
    { metrics: ["total_usage", "request_count", "tokens_total"], granularity: "day", time_range },
    ...["model", "api_key_id", "app", "user"].map((d) => ({
      metrics: ["total_usage", "request_count"],
      dimensions: [d],
      order_by: { field: "total_usage", direction: "desc" },
      limit: 5,
      time_range,
    })),
    { metrics: ["total_usage", "byok_usage", "request_count", "byok_request_count"], time_range },
  ];
  const api: number[] = [];
  let answers: unknown[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    answers = await Promise.all(
      bodies.map((b) =>
        fetch(`${server.origin}/api/v1/analytics/query`, {
          method: "POST",
          headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
          body: JSON.stringify(b),
        }).then((r) => {
          if (!r.ok) throw new Error(`query ${r.status}`);
          return r.json();
        }),
      ),
    );
    api.push(performance.now() - t0);
  }
  // What the Overview drew: a timing on an empty range would mean nothing.
  const series = (answers[0] as { data: { data: { request_count: number }[] } }).data.data;
  const requests = series.reduce((n, r) => n + Number(r.request_count), 0);
  if (requests === 0)
    throw new Error("the Overview's range holds no generations: the timing would be meaningless");
  process.stdout.write(
    `the Overview's 7 days: ${requests.toLocaleString("en-US")} requests in ${series.length} day buckets\n`,
  );
  const d = median(drawn);
  const a = median(api);
  process.stdout.write(
    `overview drawn (navigation start -> mark), median of ${RUNS}: ${d.toFixed(0)} ms ` +
      `[${drawn.map((x) => x.toFixed(0)).join(", ")}]; / 1500 ms target = ${(d / 1500).toFixed(2)}\n` +
      `baseline: its six queries from Node, median ${a.toFixed(0)} ms; page / queries = ${(d / a).toFixed(2)}\n`,
  );
} finally {
  await close();
  await server.stop();
}
