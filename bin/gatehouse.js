#!/usr/bin/env node
// Launcher of the `gatehouse` CLI: the compiled entry point (dist/, built by `npm run build`,
// which `npm install` runs through `prepare`). From the TypeScript sources: `npm run gatehouse --`.
import { existsSync } from "node:fs";

const entry = new URL("../dist/src/cli/main.js", import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write("gatehouse: dist/ is missing; run `npm run build` (or `npm install`) first\n");
  process.exit(1);
}
await import(entry.href);
