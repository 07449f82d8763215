/**
 * Runs Claude Code and Codex CLI, the real npm packages, through a Gatehouse started as an operator
 * starts it (the compiled server), in front of fake upstreams that play a scripted model
 * (test/helpers/fake-upstreams/agent-turn.ts). Each agent must complete one tool-using turn: the
 * model asks for a shell command, the agent runs it and sends the output back, the model answers
 * `AGENT-DONE <marker>`, and the agent prints that.
 *
 *   node --import tsx test/agents/agent-rig.ts [scenario …]   (prints one JSON report on stdout)
 *
 * It must run where nothing can leave the machine: test/agents/coding-agents.test.ts and
 * `npm run agents:check` start it in a network namespace holding only loopback (`unshare -n`),
 * as root. GATEHOUSE_AGENTS_DIR names the folder where the two packages are installed
 * (docs/gateway.md "Coding agents").
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic } from "../helpers/fake-upstreams/anthropic.js";
import { FAKE_OPENAI_KEY, startFakeOpenAI } from "../helpers/fake-upstreams/openai.js";
import { http, killAll, startServer, stopServer } from "../helpers/child-server.js";
import { writeProvidersFile } from "../helpers/providers-file.js";
import { AGENT_SCENARIOS, agentPaths, type AgentRun, type AgentScenario } from "./agent-scenarios.js";

const RUN_TIMEOUT_MS = 120_000;

interface Exec {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

function run(argv: string[], env: Record<string, string>, cwd: string): Promise<Exec> {
  const started = Date.now();
  return new Promise((done) => {
    const child = spawn(process.execPath, argv, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b: Buffer) => (stdout += b.toString("utf8")));
    child.stderr.on("data", (b: Buffer) => (stderr += b.toString("utf8")));
    const timer = setTimeout(() => child.kill("SIGKILL"), RUN_TIMEOUT_MS);
    child.on("exit", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

/** The environment an agent sees: nothing of this process's but PATH, a home of its own. */
function baseEnv(home: string): Record<string, string> {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, TERM: "dumb", NO_COLOR: "1" };
}

function claudeCode(s: AgentScenario, origin: string, key: string, prompt: string, home: string) {
  const env = {
    ...baseEnv(home),
    ANTHROPIC_BASE_URL: `${origin}/api`,
    ANTHROPIC_AUTH_TOKEN: key,
    ANTHROPIC_API_KEY: "",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
    DISABLE_AUTOUPDATER: "1",
  };
  const argv = [agentPaths().claudeCode, "-p", prompt, "--model", s.model, "--allowedTools", "Bash(echo:*)"];
  return run(argv, env, home);
}

/** Codex reads its provider from `$CODEX_HOME/config.toml`; the key from the variable it names. */
function codex(s: AgentScenario, origin: string, key: string, prompt: string, home: string) {
  const codexHome = join(home, ".codex");
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(
    join(codexHome, "config.toml"),
    [
      `model = "${s.model}"`,
      `model_provider = "gatehouse"`,
      ``,
      `[model_providers.gatehouse]`,
      `name = "Gatehouse"`,
      `base_url = "${origin}/api/v1"`,
      `env_key = "GATEHOUSE_KEY"`,
      `wire_api = "responses"`,
      ``,
    ].join("\n"),
  );
  const env = { ...baseEnv(home), CODEX_HOME: codexHome, GATEHOUSE_KEY: key };
  return run([agentPaths().codex, "exec", "--skip-git-repo-check", prompt], env, home);
}

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const scenarios = AGENT_SCENARIOS.filter((s) => wanted.length === 0 || wanted.includes(s.name));
  const [openai, anthropic] = await Promise.all([startFakeOpenAI(), startFakeAnthropic()]);
  const priced = {
    prompt_price: "0.000003",
    completion_price: "0.000015",
    context_length: 200_000,
    max_completion_tokens: 64_000,
  };
  const file = writeProvidersFile(
    [
      { slug: "local", kind: "openai-compatible", base_url: `${openai.url}/v1`, api_key_env: "LOCAL_KEY" },
      { slug: "claude", kind: "anthropic", base_url: anthropic.url, api_key_env: "CLAUDE_KEY" },
      {
        slug: "native",
        kind: "openai-compatible",
        base_url: `${openai.url}/v1`,
        api_key_env: "LOCAL_KEY",
        responses: true,
      },
    ],
    [
      { id: "local/agent", provider: "local", upstream_model: "agent", ...priced },
      { id: "anthropic/agent", provider: "claude", upstream_model: "agent", ...priced },
      { id: "native/agent", provider: "native", upstream_model: "agent", ...priced },
    ],
  );
  const bootKey = `sk-gh-v1-${randomBytes(32).toString("hex")}`;
  const server = await startServer({
    GATEHOUSE_PROVIDERS_FILE: file.path,
    GATEHOUSE_BOOTSTRAP_KEY: bootKey,
    LOCAL_KEY: FAKE_OPENAI_KEY,
    CLAUDE_KEY: FAKE_ANTHROPIC_KEY,
  });
  const runs: AgentRun[] = [];
  try {
    for (const s of scenarios) {
      const created = await http(`${server.base}/keys`, {
        method: "POST",
        key: bootKey,
        body: { name: s.name, limit: 10 },
      });
      const key = created.body.key as string;
      const marker = `gatehouse-agent-${randomBytes(5).toString("hex")}`;
      const prompt = `Run the shell command \`echo ${marker}\` and reply with what it printed.`;
      const home = mkdtempSync(join(tmpdir(), `gh-agent-${s.name}-`));
      const upstreamBefore = { openai: openai.requests.length, anthropic: anthropic.requests.length };
      try {
        const out = await (s.agent === "claude-code"
          ? claudeCode(s, server.origin, key, prompt, home)
          : codex(s, server.origin, key, prompt, home));
        const upstream = [
          ...openai.requests.slice(upstreamBefore.openai).map((r) => `openai ${r.path}`),
          ...anthropic.requests.slice(upstreamBefore.anthropic).map((r) => `anthropic ${r.path}`),
        ];
        const me = await http(`${server.base}/key`, { key });
        runs.push({
          scenario: s.name,
          marker,
          exitCode: out.code,
          ms: out.ms,
          stdoutTail: out.stdout.slice(-2_000),
          stderrTail: out.stderr.slice(-2_000),
          upstream,
          keyUsage: (me.body?.data?.usage as number | undefined) ?? null,
        });
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    }
    const analytics = await http(`${server.base}/analytics/query`, {
      method: "POST",
      key: bootKey,
      body: { metrics: ["request_count", "total_usage"], dimensions: ["api", "model"] },
    });
    process.stdout.write(
      `${JSON.stringify({ runs, analytics: analytics.body?.data?.data ?? analytics.text })}\n`,
    );
  } finally {
    await stopServer(server);
    killAll();
    await Promise.all([openai.close(), anthropic.close()]);
    file.remove();
  }
}

await main();
