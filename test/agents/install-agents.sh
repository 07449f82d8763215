#!/usr/bin/env bash
# Installs Claude Code and Codex CLI (the versions the recorded turns come from) into
# $GATEHOUSE_AGENTS_DIR, outside the project: they are not its dependencies (about 760 MB, the
# native binaries come from the npm registry as the packages' optional dependencies).
set -euo pipefail
dir="${GATEHOUSE_AGENTS_DIR:?GATEHOUSE_AGENTS_DIR must name a folder outside the project}"
packages=("@anthropic-ai/claude-code@2.1.328" "@openai/codex@0.169.0")
if [ -f "$dir/node_modules/@anthropic-ai/claude-code/cli-wrapper.cjs" ] &&
   [ -f "$dir/node_modules/@openai/codex/bin/codex.js" ] &&
   grep -q '"version": "2.1.328"' "$dir/node_modules/@anthropic-ai/claude-code/package.json" &&
   grep -q '"version": "0.169.0"' "$dir/node_modules/@openai/codex/package.json"; then
  exit 0
fi
mkdir -p "$dir"
[ -f "$dir/package.json" ] || echo '{"name":"gatehouse-agents","private":true}' > "$dir/package.json"
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "${packages[@]}"
