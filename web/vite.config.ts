import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { defineConfig, type Plugin } from "vite";

const OUT_DIR = resolve(import.meta.dirname, "../dist/web");

/** Writes .br and .gz beside every text asset, served by @fastify/static's `preCompressed`. */
function precompress(): Plugin {
  return {
    name: "gatehouse-precompress",
    apply: "build",
    closeBundle() {
      const walk = (dir: string): string[] =>
        readdirSync(dir).flatMap((f) => {
          const p = join(dir, f);
          return statSync(p).isDirectory() ? walk(p) : [p];
        });
      for (const file of walk(OUT_DIR)) {
        if (!/\.(js|css|html|svg|json)$/.test(file)) continue;
        const body = readFileSync(file);
        writeFileSync(`${file}.gz`, gzipSync(body, { level: 9 }));
        writeFileSync(
          `${file}.br`,
          brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
        );
      }
    },
  };
}

/**
 * The dashboard: Preact + uPlot, built into dist/web (served by the Gatehouse server at `/`).
 * `npx vite --config web/vite.config.ts` runs the dev server, proxying the API to a local
 * Gatehouse at GATEHOUSE_URL (default http://127.0.0.1:8080); see docs/dashboard.md.
 */
export default defineConfig({
  root: import.meta.dirname,
  base: "/",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: OUT_DIR,
    emptyOutDir: true,
    target: "es2022",
    // The polyfill would be an inline script, which the Content-Security-Policy forbids.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    reportCompressedSize: false,
  },
  server: {
    proxy: Object.fromEntries(
      ["/api", "/healthz", "/readyz"].map((p) => [p, process.env.GATEHOUSE_URL ?? "http://127.0.0.1:8080"]),
    ),
  },
  plugins: [precompress()],
});
