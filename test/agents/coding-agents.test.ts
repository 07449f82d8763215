import { execFileSync, spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { AGENT_SCENARIOS, agentPaths, type AgentRun } from "./agent-scenarios.js";

/**
 * Claude Code and Codex CLI themselves (their npm packages, installed outside the project by
 * test/agents/install-agents.sh; .ci/run does it) complete a tool-using turn through Gatehouse,
 * each on a provider that speaks its API natively and on one it is translated for. Everything runs
 * in a network namespace that holds only loopback, so no agent can reach anything else.
 *
 * Per run: the agent exits 0 and prints `AGENT-DONE <marker>`, which the scripted model answers
 * only once the shell command's output came back to it in a tool result; the upstream received two
 * requests in its own shape; the key was charged both; analytics counts both under the agent's API.
 */
const ROOT = resolve(import.meta.dirname, "../..");
const { installed } = agentPaths();

function namespaceReason(): string | null {
  if (process.getuid?.() !== 0) return "not root: a loopback-only network namespace needs root";
  const probe = spawnSync("unshare", ["-n", "--", "sh", "-c", "ip link set lo up"], { encoding: "utf8" });
  return probe.status === 0 ? null : `unshare -n failed: ${probe.error?.message ?? probe.stderr.trim()}`;
}

const reason = installed
  ? namespaceReason()
  : `the agents are not installed (GATEHOUSE_AGENTS_DIR=${process.env.GATEHOUSE_AGENTS_DIR ?? "unset"}; run test/agents/install-agents.sh)`;
if (reason) console.warn(`coding-agents: skipped: ${reason}`);

interface Report {
  runs: AgentRun[];
  analytics: { api: string; model: string; request_count: number }[];
}

describe.skipIf(reason !== null)("coding agents through Gatehouse", () => {
  let report: Report;
  beforeAll(() => {
    const out = execFileSync(
      "unshare",
      [
        "-n",
        "--",
        "sh",
        "-c",
        'ip link set lo up && exec "$0" --import tsx test/agents/agent-rig.ts',
        process.execPath,
      ],
      { cwd: ROOT, encoding: "utf8", env: process.env, timeout: 300_000, maxBuffer: 16 * 1024 * 1024 },
    );
    report = JSON.parse(out) as Report;
  }, 320_000);

  for (const s of AGENT_SCENARIOS) {
    it(`${s.name}: ${s.agent} on ${s.model} completes a tool-using turn`, () => {
      const run = report.runs.find((r) => r.scenario === s.name)!;
      const why = `${run.stdoutTail}\n${run.stderrTail}`;
      expect(run.exitCode, why).toBe(0);
      expect(run.stdoutTail, why).toContain(`AGENT-DONE ${run.marker}`);
      expect(run.upstream).toEqual([s.upstreamPath, s.upstreamPath]);
      // Two requests of 40 prompt tokens at $3/M and 12 completion tokens at $15/M.
      expect(run.keyUsage).toBeCloseTo(2 * (40 * 3e-6 + 12 * 15e-6), 12);
      const row = report.analytics.find((r) => r.api === s.api && r.model === s.model);
      const sameRow = AGENT_SCENARIOS.filter((o) => o.api === s.api && o.model === s.model).length;
      expect(row?.request_count).toBe(2 * sameRow);
    });
  }
});
