/**
 * A streamed answer's writes to the client: the gateway's response sink (src/http/routes/
 * sse-response.ts: the events of one turn gathered into one HTTP chunk) against the sink it
 * replaced (the baseline: the socket corked for the turn, one `res.write` per event, each framed
 * as its own HTTP chunk), in one server process, measured in alternating closed-loop slices
 * (A B B A …) from a load process. The server answers each request as the gateway answers the
 * bench's stream (bench/lib/gateway-load.ts): the head and five content events in one turn, then,
 * a turn later (the settle), the usage event and `[DONE]` with the end. Printed: requests/s and
 * the server's CPU per request (all threads, from /proc) of each, and the ratios.
 *
 *   npm run build:server && npx tsx bench/experiments/sse-response.ts [--slices 12] [--slice-ms 1000] [--connections 8]
 */
import { numberOption } from "../lib/args.js";
import { childJson, cpuMsOf } from "../lib/child-process.js";
import { closedLoop, localTarget, type Target } from "../lib/gateway-load.js";

const opt = numberOption(process.argv.slice(2));
const SLICES = opt("slices", 12);
const SLICE_MS = opt("slice-ms", 1000);
const CONNECTIONS = opt("connections", 8);

const SERVER_JS = `
import { createServer } from "node:http";
import { sseResponse } from "./dist/src/http/routes/sse-response.js";

/** The baseline sink, as src/http/routes/chat.ts wrote a stream up to this bench's commit. */
function corkedPerEvent(res, head) {
  let corked = false;
  const corkTurn = () => {
    if (corked) return;
    corked = true;
    res.cork();
    process.nextTick(() => { corked = false; res.uncork(); });
  };
  return {
    start(headers) { head(headers); corkTurn(); res.flushHeaders(); },
    write(text) { if (res.destroyed) return; corkTurn(); res.write(text); },
    end(last) { if (!res.destroyed) res.end(last); },
  };
}

const prefix = 'data: {"id":"gen-1795773012453-EI7-2UtZb4uaH_fJTwU6wUIa","provider":"Bench","model":"bench/tiny","object":"chat.completion.chunk","created":1795773012,';
const event = (choices, extra = "") => prefix + '"choices":' + JSON.stringify(choices) + extra + "}\\n\\n";
const contents = [{ role: "assistant", content: "" }, { content: "Hello there," }, { content: " bench" }, { content: " friend." }]
  .map((delta) => event([{ index: 0, delta, finish_reason: null }]))
  .concat(event([{ index: 0, delta: {}, finish_reason: "stop" }]));
const usage = event([], ',"usage":{"prompt_tokens":12,"completion_tokens":6,"total_tokens":18,"cost":0.000024}');

const server = createServer((req, res) => {
  req.resume();
  req.on("end", async () => {
    const sink = (req.url === "/baseline" ? corkedPerEvent : sseResponse)(res, (headers) =>
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive", ...headers }),
    );
    sink.start({ "x-gatehouse-generation-id": "gen-1" });
    for (const e of contents) sink.write(e);
    sink.write(usage);
    await new Promise((r) => setImmediate(r));
    sink.end("data: [DONE]\\n\\n");
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => process.stdout.write(JSON.stringify({ port: server.address().port }) + "\\n"));
`;

const server = childJson(SERVER_JS);
try {
  const { port } = (await server.first) as { port: number };
  const pid = server.child.pid!;
  const target = (path: string): Target => localTarget(port, path, "{}");
  const sides = { baseline: target("/baseline"), sink: target("/sink") };
  const totals = { baseline: { requests: 0, cpu: 0, ms: 0 }, sink: { requests: 0, cpu: 0, ms: 0 } };
  // Warm both (JIT), then alternate.
  for (const t of Object.values(sides)) await closedLoop(t, pid, CONNECTIONS, 2_000);
  for (let s = 0; s < SLICES; s++) {
    const order: (keyof typeof sides)[] =
      s % 4 === 0 || s % 4 === 3 ? ["baseline", "sink"] : ["sink", "baseline"];
    for (const k of order) {
      const cpu0 = cpuMsOf(pid) ?? 0;
      const [rps] = await closedLoop(sides[k], null, CONNECTIONS, SLICE_MS);
      totals[k].cpu += (cpuMsOf(pid) ?? 0) - cpu0;
      totals[k].requests += (rps * SLICE_MS) / 1000;
      totals[k].ms += SLICE_MS;
    }
  }
  const row = (k: keyof typeof totals) => {
    const t = totals[k];
    return { rps: (t.requests * 1000) / t.ms, cpu: t.cpu / t.requests };
  };
  const [a, b] = [row("baseline"), row("sink")];
  console.log(`${SLICES} slices of ${SLICE_MS} ms each, ${CONNECTIONS} connections\n`);
  console.log("| sink | requests/s | server CPU per request |\n| --- | --- | --- |");
  console.log(
    `| baseline: corked turn, one HTTP chunk per event | ${a.rps.toFixed(0)} | ${(a.cpu * 1000).toFixed(1)} µs |`,
  );
  console.log(
    `| sseResponse: one HTTP chunk per turn | ${b.rps.toFixed(0)} | ${(b.cpu * 1000).toFixed(1)} µs |`,
  );
  console.log(
    `\nsseResponse / baseline: CPU per request ${((100 * b.cpu) / a.cpu).toFixed(1)} %, requests/s ${((100 * b.rps) / a.rps).toFixed(1)} %`,
  );
} finally {
  server.child.kill();
}
