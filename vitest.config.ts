import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Rebuilds dist/ when a source is newer: process tests start the compiled server and CLI.
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Each file in a fresh process (the default isolation). Without isolation, and with three
    // workers, the suite ran in 520 s against 740 s, but a clean-clone CI run then failed twice:
    // a module's side effect in one file changed what `fetch` another file later used
    // (test/broadcast/native-encoders.test.ts), and a PostgreSQL budget test answered a 500 under
    // the extra load. Not worth a CI that lands nothing until both are understood.
    maxWorkers: 2,
  },
});
