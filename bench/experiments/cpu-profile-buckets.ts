/**
 * Where a saturated server's main thread spends its time, from a V8 CPU profile (`.cpuprofile`,
 * written by `--cpu-prof`): each sample's time goes to the innermost owner on its stack, a
 * project file (`dist/src/...`, grouped by folder) or a package (`node_modules/<name>`), so that
 * native work (a socket write, a SQLite statement, a JSON.stringify) counts for the code that asked
 * for it; GC and V8's own work are buckets of their own. Also printed: the leaf functions' self
 * time. Only samples in the window `--from` to `--to` (ms since the profile started) count: the
 * server's start-up and warm-up are left out.
 *
 * Make a profile with the A/B bench (`--node-args` applies to this checkout's server):
 *
 *   npx tsx bench/gateway-ab.ts --baseline . --slices 8 --recording durable \
 *     --node-args "--cpu-prof --cpu-prof-dir=/tmp/prof"
 *   npx tsx bench/experiments/cpu-profile-buckets.ts /tmp/prof/CPU.*.cpuprofile [--from 15000] [--to 40000] [--top 30]
 *     [--owner pkg:fastify]
 *
 * (The main thread's profile is the one named with thread number 0; the others are workers'.)
 */
import { readFileSync } from "node:fs";
import { numberOption } from "../lib/args.js";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith("--") && !/^\d+$/.test(a));
if (!file) throw new Error("usage: cpu-profile-buckets.ts FILE.cpuprofile [--from ms] [--to ms] [--top n]");
const opt = numberOption(args);
const FROM_US = opt("from", 0) * 1000;
const TO_US = opt("to", Number.MAX_SAFE_INTEGER / 1000) * 1000;
const TOP = opt("top", 30);
/** `--owner pkg:fastify`: also the leaf functions of that owner's samples (what it spends on). */
const OWNER = args[args.indexOf("--owner") + 1];

const p = JSON.parse(readFileSync(file, "utf8")) as Profile;
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

/** A frame's code: `src/<path>` for the project's compiled files, `pkg:<name>` for a package. */
function codeOf(url: string): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return `pkg:${pkg[1]}`;
  const own = /dist\/src\/(.*)$/.exec(url);
  return own ? `src/${own[1]}` : url;
}
const folderOf = (code: string): string =>
  code.startsWith("src/") ? code.slice(0, code.lastIndexOf("/")) : code;

function ownerOf(id: number): string | null {
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const code = codeOf(byId.get(cur)!.callFrame.url);
    if (code.startsWith("src/") || code.startsWith("pkg:")) return folderOf(code);
  }
  return null;
}

const owners = new Map<string, number>();
const leaves = new Map<string, number>();
const ownerLeaves = new Map<string, number>();
const add = (m: Map<string, number>, k: string, v: number): void => void m.set(k, (m.get(k) ?? 0) + v);
let busy = 0;
let idle = 0;
let t = 0;
for (let i = 0; i < p.samples.length; i++) {
  t += p.timeDeltas[i]!;
  if (t < FROM_US || t > TO_US) continue;
  const node = byId.get(p.samples[i]!)!;
  const dt = p.timeDeltas[i + 1] ?? p.timeDeltas[i]!;
  const { functionName, url, lineNumber } = node.callFrame;
  if (functionName === "(idle)") {
    idle += dt;
    continue;
  }
  busy += dt;
  const special = functionName === "(garbage collector)" || functionName === "(program)";
  const owner = special ? functionName : (ownerOf(node.id) ?? `(no owner) ${codeOf(url) || functionName}`);
  const leaf = `${functionName || "(anonymous)"} ${codeOf(url)}:${lineNumber}`;
  add(owners, owner, dt);
  add(leaves, leaf, dt);
  if (owner === OWNER) add(ownerLeaves, leaf, dt);
}

const show = (title: string, m: Map<string, number>): void => {
  console.log(`\n${title}\n`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, TOP)) {
    console.log(
      `${((v / busy) * 100).toFixed(1).padStart(5)} %  ${(v / 1000).toFixed(0).padStart(6)} ms  ${k}`,
    );
  }
};
console.log(`busy ${(busy / 1000).toFixed(0)} ms, idle ${(idle / 1000).toFixed(0)} ms in the window`);
show("by the innermost owner on the stack (project folder or package)", owners);
show("by the leaf function (self time)", leaves);
if (args.includes("--owner")) show(`the leaf functions of ${OWNER}'s samples`, ownerLeaves);
