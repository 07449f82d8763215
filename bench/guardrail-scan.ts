/**
 * The content filter scan (issue 38's bound: under 1 ms for a 100 KB prompt): a realistic
 * prompt (bench/lib/sample-prompt.ts: prose with emails, phone numbers, amounts, dates, an IP
 * address now and then) scanned with all nine built-in detectors and three custom filters, as a
 * text (`scanText`, redaction included) and as a chat completions body (`scanRequest`). Printed:
 * median and p99 per scan over many scans, the ratio to the 1 ms target, and for scale
 * `JSON.parse` of the same body in the same run; then where the time goes, each filter's own
 * search over the text (median), which is what to look at before optimising.
 *
 *   npm run bench:guardrail-scan -- [--kb 100] [--scans 3000] [--seed 1]
 */
import { numberOption } from "./lib/args.js";
import { samplePrompt } from "./lib/sample-prompt.js";
import { median, quantile } from "./lib/stats.js";
import {
  BUILTIN_FILTER_SLUGS,
  type GuardrailAction,
  type GuardrailPolicy,
} from "../src/domain/guardrails/guardrail-policy.js";
import { BUILTIN_DETECTORS, ScanText } from "../src/gateway/guardrails/builtin-detectors.js";
import { combineGuardrails } from "../src/gateway/guardrails/combine.js";
import { compileCustomPattern, scannerOf } from "../src/gateway/guardrails/content-scan.js";
import { eachMatch } from "../src/gateway/guardrails/detectors/scan-text.js";
import { scanRequest } from "../src/gateway/guardrails/scan-request.js";

const opt = numberOption(process.argv.slice(2));
const KB = opt("kb", 100);
const SCANS = opt("scans", 3000);
const SEED = opt("seed", 1);
const TARGET_MS = 1;

const ACTIONS: Record<string, GuardrailAction> = { "regex-prompt-injection": "block", "person-name": "flag" };
const guardrail: GuardrailPolicy = {
  id: "bench",
  organizationId: "org",
  workspaceId: null,
  name: "bench",
  isDefault: true,
  limitNano: null,
  resetInterval: null,
  includeByokInBudgets: false,
  rules: {
    allowedModels: null,
    ignoredModels: null,
    allowedProviders: null,
    ignoredProviders: null,
    allowedDataRegions: null,
    enforceZdr: null,
    enforceZdrGroups: { anthropic: null, openai: null, google: null, xai: null, other: null },
    enableFreeModelPublication: null,
    enableFreeModelTraining: null,
    enablePaidModelTraining: null,
    contentFilters: [
      { pattern: String.raw`ACME-\d{6}`, action: "redact", label: "[TICKET]" },
      {
        pattern: String.raw`(?:project|codename) (?:falcon|kestrel|osprey)`,
        action: "flag",
        label: "[PROJECT]",
      },
      { pattern: String.raw`\bEMP\d{5}\b`, action: "block", label: null },
    ],
    contentFilterBuiltins: BUILTIN_FILTER_SLUGS.map((slug) => ({
      slug,
      action: ACTIONS[slug] ?? "redact",
      scanScope: null,
    })),
  },
};

const body = JSON.stringify({
  model: "bench/tiny",
  messages: [{ role: "user", content: samplePrompt(KB * 1000, SEED) }],
});
/** As the gateway has it: parsed from the request's JSON (one flat string). */
const parsed = JSON.parse(body) as { messages: { content: string }[] };
const text = parsed.messages[0]!.content;
const scanner = scannerOf(combineGuardrails([{ guardrail, via: "workspace" }]));

const first = scanner.scanText(text);
const counts = new Map<string, number>();
for (const l of [...first.redactedLabels, ...first.flagged]) counts.set(l, (counts.get(l) ?? 0) + 1);
if (first.redacted === null || first.blocked.length > 0)
  throw new Error("the sample prompt should be redacted, not blocked");

/** ms per call of `f`, one sample per call, after a warm-up. */
function samples(f: () => unknown): number[] {
  for (let i = 0; i < Math.min(300, SCANS); i++) f();
  const out: number[] = [];
  for (let i = 0; i < SCANS; i++) {
    const t0 = process.hrtime.bigint();
    f();
    out.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return out;
}

const rows = [
  { name: "scanText (9 built-ins + 3 custom, redacting)", ms: samples(() => scanner.scanText(text)) },
  {
    name: "scanRequest (chat body, one user message)",
    ms: samples(() => scanRequest(parsed, scanner, { surface: "chat" })),
  },
  { name: "JSON.parse of the same body (for scale)", ms: samples(() => JSON.parse(body)) },
];

console.log(`${(text.length / 1000).toFixed(0)} KB prompt, ${SCANS} scans each, Node ${process.version}`);
console.log(`found: ${[...counts].map(([l, n]) => `${l} ${n}`).join(", ")}`);
console.log("");
console.log("| scan | median | p99 | median / 1 ms target |");
console.log("| --- | --- | --- | --- |");
for (const r of rows) {
  const m = median(r.ms);
  const p99 = quantile(r.ms, 0.99);
  console.log(`| ${r.name} | ${m.toFixed(3)} ms | ${p99.toFixed(3)} ms | ${(m / TARGET_MS).toFixed(2)} |`);
}

const filters = guardrail.rules;
const parts = [
  ...(filters.contentFilterBuiltins ?? []).map((b) => ({
    name: b.slug,
    run: () => BUILTIN_DETECTORS[b.slug].find(new ScanText(text), []),
  })),
  ...(filters.contentFilters ?? []).map((c) => {
    const re = compileCustomPattern(c.pattern)!;
    return { name: `/${c.pattern}/`, run: () => eachMatch(re, text, () => undefined) };
  }),
];
const SAMPLES = Math.max(50, Math.round(SCANS / 10));
const each = parts.map((p) => {
  for (let i = 0; i < 20; i++) p.run();
  const ms: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const t0 = process.hrtime.bigint();
    p.run();
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return { name: p.name, us: median(ms) * 1000 };
});
console.log("");
console.log(
  `each filter alone, median of ${SAMPLES}: ${each.map((e) => `${e.name} ${e.us.toFixed(0)} µs`).join(", ")}`,
);
