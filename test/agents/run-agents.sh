#!/usr/bin/env bash
# `npm run agents:check`: installs the two coding agents if needed, then runs each through a
# Gatehouse built from this checkout, in a network namespace holding only loopback (as root), and
# prints one line per run. docs/gateway.md "Coding agents" explains.
set -euo pipefail
cd "$(dirname "$0")/../.."
export GATEHOUSE_AGENTS_DIR="${GATEHOUSE_AGENTS_DIR:-/tmp/gatehouse-agents}"
bash test/agents/install-agents.sh
npm run --silent build:server
report="$(mktemp)"
unshare -n -- sh -c 'ip link set lo up && exec node --import tsx test/agents/agent-rig.ts "$@"' rig "$@" > "$report"
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  for (const x of r.runs) {
    const ok = x.exitCode === 0 && x.stdoutTail.includes(`AGENT-DONE ${x.marker}`);
    console.log(`${ok ? "ok  " : "FAIL"} ${x.scenario.padEnd(24)} ${String(x.ms).padStart(6)} ms  upstream: ${x.upstream.join(", ")}  key usage: $${x.keyUsage}`);
    if (!ok) console.log(x.stdoutTail, x.stderrTail);
  }
  process.exitCode = r.runs.every((x) => x.exitCode === 0 && x.stdoutTail.includes(`AGENT-DONE ${x.marker}`)) ? 0 : 1;
' "$report"
