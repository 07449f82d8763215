import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Rebuilds dist/ when a source is newer: process tests start the compiled server and CLI.
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Two cores: more workers only adds contention.
    maxWorkers: 2,
  },
});
