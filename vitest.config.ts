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
    // server once per worker instead of once per file saves about 5 minutes of CPU a run (the suite
    // took 739 s against 517 s side by side on one of the project's machines). So a test file must leave no module state
    // behind (test/unit/test-isolation.test.ts checks for mocks and stubbed globals). Two failures
    // this first met are fixed at their cause: a helper's fetch sent its own Content-Length, which
    // npm undici (global fetch's dispatcher once loaded) refuses; a test counted a send that missed
    // the tests' 300 ms timeout on a loaded machine as a failure. Three workers on two cores: many
    // files wait (on child processes, timers, a browser), and two left a quarter of the machine idle.
    isolate: false,
    maxWorkers: 3,
  },
});
