import { ensureBuilt } from "./helpers/compiled.js";

/** Once before any test file: dist/ is current (test/helpers/compiled.ts says why). */
export default function setup(): void {
  const t0 = performance.now();
  const rebuilt = ensureBuilt();
  if (rebuilt.length > 0) {
    process.stdout.write(
      `global setup: rebuilt ${rebuilt.join(" and ")} (sources newer than dist/) in ${Math.round(performance.now() - t0)} ms\n`,
    );
  }
}
