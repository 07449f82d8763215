#!/usr/bin/env node
// Launcher of the `gatehouse` CLI: registers tsx's ESM loader in this process, then runs the
// TypeScript entry point. One process, so signals and exit codes pass through unchanged.
import { register } from "tsx/esm/api";

register();
await import(new URL("../src/cli/main.ts", import.meta.url).href);
