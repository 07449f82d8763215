/**
 * A JSON request body's reading: src/http/request-body.ts (readWholeBody: a body already in the
 * request's buffer taken at once) against what it replaced (the baseline: Fastify's own
 * `parseAs: "buffer"` reading, through the request stream's `data` and `end` events), in one
 * Fastify server process with one route for each, the bench's chat body (bench/lib/gateway-load.ts)
 * parsed and part of it answered. Measured alternating (bench/lib/alternate.ts: one unmeasured
 * slice of each, then A B, B A, …) from a load process:
 *
 *   - at a fixed rate (50 requests/s, open loop): latency from the scheduled send to the last
 *     byte, p50 and p99 over all slices, where every request finds the server idle;
 *   - at saturation (closed loop, 8 connections): requests/s and the server's CPU per request
 *     (all threads, from /proc).
 *
 *   npm run build:server && npx tsx bench/experiments/request-body.ts [--slices 8] [--requests 300] [--slice-ms 1000]
 */
import { alternate } from "../lib/alternate.js";
import { numberOption } from "../lib/args.js";
import { childJson, cpuMsOf } from "../lib/child-process.js";
import { chatBody, closedLoop, localTarget, openLoop, type Target } from "../lib/gateway-load.js";
import { quantile } from "../lib/stats.js";

const opt = numberOption(process.argv.slice(2));
const SLICES = opt("slices", 8);
const REQUESTS = opt("requests", 300);
const SLICE_MS = opt("slice-ms", 1000);
const CONNECTIONS = opt("connections", 8);

const SERVER_JS = `
import Fastify from "fastify";
import { readWholeBody } from "./dist/src/http/request-body.js";

const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
// As Gatehouse's authentication: an async onRequest hook, after which the body has been buffered.
app.addHook("onRequest", async (request) => {
  await Promise.resolve();
  request.key = request.headers["content-type"];
});
const answer = async (request) => ({ model: request.body.model, messages: request.body.messages.length });
await app.register(async (scope) => {
  scope.removeContentTypeParser("application/json");
  scope.addContentTypeParser("application/json", { parseAs: "buffer" }, (request, body, done) => {
    try { done(null, JSON.parse(body.toString("utf8"))); } catch (err) { done(err, undefined); }
  });
  scope.post("/baseline", answer);
});
await app.register(async (scope) => {
  scope.removeContentTypeParser("application/json");
  scope.addContentTypeParser("application/json", (request, payload, done) => {
    readWholeBody(request.raw, payload, request.routeOptions.bodyLimit, (err, body) => {
      if (err) return done(err, undefined);
      try { done(null, JSON.parse(body.toString("utf8"))); } catch (e) { done(e, undefined); }
    });
  });
  scope.post("/candidate", answer);
});
await app.listen({ host: "127.0.0.1", port: 0 });
process.stdout.write(JSON.stringify({ port: app.server.address().port }) + "\\n");
`;

const server = childJson(SERVER_JS);
try {
  const { port } = (await server.first) as { port: number };
  const pid = server.child.pid!;
  const target = (path: string): Target => localTarget(port, path, chatBody("bench/tiny", false));
  /** One slice of a side: the fixed-rate latencies, then the closed loop's requests and CPU. */
  const slice = async (t: Target) => {
    const { total } = await openLoop(t, 50, REQUESTS);
    const cpu0 = cpuMsOf(pid) ?? 0;
    const [rps] = await closedLoop(t, null, CONNECTIONS, SLICE_MS);
    return { latency: total, cpu: (cpuMsOf(pid) ?? 0) - cpu0, requests: (rps * SLICE_MS) / 1000 };
  };
  const [baseline, candidate] = await alternate(
    SLICES,
    () => slice(target("/baseline")),
    () => slice(target("/candidate")),
  );
  const row = (slices: Awaited<ReturnType<typeof slice>>[]) => {
    const requests = slices.reduce((n, s) => n + s.requests, 0);
    const latency = slices.flatMap((s) => s.latency);
    return {
      rps: (requests * 1000) / (slices.length * SLICE_MS),
      cpu: slices.reduce((n, s) => n + s.cpu, 0) / requests,
      p50: quantile(latency, 0.5),
      p99: quantile(latency, 0.99),
    };
  };
  const [a, b] = [row(baseline), row(candidate)];
  console.log(
    `${SLICES} slices: ${REQUESTS} requests at 50/s, then ${SLICE_MS} ms closed loop on ${CONNECTIONS} connections\n`,
  );
  console.log(
    "| body reading | p50 at 50/s | p99 at 50/s | requests/s | server CPU per request |\n| --- | --- | --- | --- | --- |",
  );
  const line = (name: string, r: typeof a) =>
    `| ${name} | ${r.p50.toFixed(3)} ms | ${r.p99.toFixed(3)} ms | ${r.rps.toFixed(0)} | ${(r.cpu * 1000).toFixed(1)} µs |`;
  console.log(line("baseline: Fastify's parseAs buffer", a));
  console.log(line("readWholeBody", b));
  console.log(
    `\nreadWholeBody - baseline: p50 ${((b.p50 - a.p50) * 1000).toFixed(1)} µs, p99 ${((b.p99 - a.p99) * 1000).toFixed(1)} µs;` +
      ` readWholeBody / baseline: CPU per request ${((100 * b.cpu) / a.cpu).toFixed(1)} %, requests/s ${((100 * b.rps) / a.rps).toFixed(1)} %`,
  );
} finally {
  server.child.kill();
}
