import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dirname, "../..");

/**
 * Tests that start Gatehouse as a process (the server, the CLI) run the compiled build in dist/,
 * as `npm start` and the `gatehouse` bin do: a process starts in about a third of the time it takes
 * through tsx, which matters for the suites that start dozens. test/global-setup.ts rebuilds dist/
 * before any test runs whenever a source is newer than the build, so these never run stale code.
 */
export const SERVER_ARGV: readonly string[] = [join(ROOT, "dist", "src", "main.js")];
export const CLI_ARGV: readonly string[] = [join(ROOT, "dist", "src", "cli", "main.js")];

/** Newest modification time (ms) of the files under `dir` whose names match `re`; 0 when none. */
function newest(dir: string, re: RegExp): number {
  if (!existsSync(dir)) return 0;
  let max = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) max = Math.max(max, newest(p, re));
    else if (re.test(e.name)) max = Math.max(max, statSync(p).mtimeMs);
  }
  return max;
}

const builtAt = (file: string): number => (existsSync(file) ? statSync(file).mtimeMs : 0);

/** Runs `npm run <script>` in ROOT, its output shown only when it fails. */
function npmRun(script: string): void {
  execFileSync(process.platform === "win32" ? "npm.cmd" : "npm", ["run", script], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
}

/**
 * Rebuilds what is older than its sources: the server (src/ → dist/src, tsc) and the dashboard
 * (web/ and the API schemas it is typed from → dist/web, Vite). Returns what was rebuilt.
 */
export function ensureBuilt(): string[] {
  const rebuilt: string[] = [];
  const tsConfigs = Math.max(
    builtAt(join(ROOT, "tsconfig.json")),
    builtAt(join(ROOT, "tsconfig.build.json")),
  );
  const serverSources = Math.max(newest(join(ROOT, "src"), /\.(ts|mts|mjs|js|json)$/), tsConfigs);
  if (serverSources > builtAt(join(ROOT, "dist", "src", "main.js"))) {
    npmRun("build:server");
    rebuilt.push("server");
  }
  const webSources = Math.max(
    newest(join(ROOT, "web"), /\.(ts|tsx|css|html|json)$/),
    newest(join(ROOT, "src", "http"), /\.ts$/),
  );
  if (webSources > builtAt(join(ROOT, "dist", "web", "index.html"))) {
    npmRun("build:web");
    rebuilt.push("dashboard");
  }
  return rebuilt;
}
