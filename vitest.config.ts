import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Rebuilds dist/ when a source is newer: process tests start the compiled server and CLI.
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // A worker runs its files one after another in one module cache: importing the stores and the
    // server once per worker instead of once per file saves about 5 minutes of CPU a run. So a test
    // file must leave no module state behind (no vi.mock: test/unit/test-isolation.test.ts checks).
    isolate: false,
    // Three on two cores: many files wait (on child processes, timers, a browser) and two workers
    // left a quarter of the machine idle; three ran the suite in 520 s against 650 s, all passing.
    maxWorkers: 3,
  },
});
