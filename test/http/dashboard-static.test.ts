import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliCompressSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { DASHBOARD_CSP } from "../../src/http/plugins/dashboard.js";
import { makeTestApp } from "../helpers/app.js";

/**
 * Serving of the dashboard's build at `/` (a stand-in build in a temp directory: the API's tests
 * never need the real web build), and the server without any build.
 */
const dir = mkdtempSync(join(tmpdir(), "gh-web-"));
mkdirSync(join(dir, "assets"));
writeFileSync(
  join(dir, "index.html"),
  "<!doctype html><title>Gatehouse</title><script type=module src=/assets/app-1.js></script>",
);
const js = "console.log('dashboard');".repeat(50);
writeFileSync(join(dir, "assets", "app-1.js"), js);
writeFileSync(join(dir, "assets", "app-1.js.br"), brotliCompressSync(js));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("dashboard static files", () => {
  it("serves index.html at / and for client routes, with the CSP and security headers", async () => {
    const t = await makeTestApp({ config: { webDir: dir } });
    for (const url of ["/", "/keys", "/analytics?q=%7B%7D", "/workspaces/x"]) {
      const res = await t.call({ method: "GET", url, auth: null });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers["content-type"]).toMatch(/^text\/html/);
      expect(res.body).toContain("<title>Gatehouse</title>");
      expect(res.headers["content-security-policy"]).toBe(DASHBOARD_CSP);
      expect(res.headers["x-content-type-options"]).toBe("nosniff");
      expect(res.headers["x-frame-options"]).toBe("DENY");
      expect(res.headers["referrer-policy"]).toBe("no-referrer");
      expect(res.headers["cache-control"]).toBe("no-cache");
    }
    expect(DASHBOARD_CSP).toContain("default-src 'none'");
    expect(DASHBOARD_CSP).not.toMatch(/unsafe|\*|https?:/);
    await t.close();
  });

  it("serves hashed assets precompressed and cached for good", async () => {
    const t = await makeTestApp({ config: { webDir: dir } });
    const br = await t.call({
      method: "GET",
      url: "/assets/app-1.js",
      auth: null,
      headers: { "accept-encoding": "br, gzip" },
    });
    expect(br.statusCode).toBe(200);
    expect(br.headers["content-encoding"]).toBe("br");
    expect(br.headers["cache-control"]).toContain("immutable");
    expect(br.headers["content-security-policy"]).toBe(DASHBOARD_CSP);
    const plain = await t.call({
      method: "GET",
      url: "/assets/app-1.js",
      auth: null,
      headers: { "accept-encoding": "identity" },
    });
    expect(plain.body).toBe(js);
    await t.close();
  });

  it("keeps the API's JSON answers: unknown API routes, missing files and probes", async () => {
    const t = await makeTestApp({ config: { webDir: dir } });
    for (const url of ["/api/v1/nope", "/api/v1", "/api/other", "/assets/missing.js", "/favicon.ico"]) {
      const res = await t.call({ method: "GET", url, auth: null });
      expect(res.statusCode, url).toBe(404);
      expect(res.json().error.code).toBe(404);
    }
    const post = await t.call({ method: "POST", url: "/keys", auth: null, payload: {} });
    expect(post.statusCode).toBe(404);
    expect(post.json().error.code).toBe(404);
    expect((await t.call({ method: "GET", url: "/healthz", auth: null })).json()).toEqual({ status: "ok" });
    const keys = await t.call({ method: "GET", url: "/api/v1/keys" });
    expect(keys.statusCode).toBe(200);
    expect(keys.headers["content-security-policy"]).toBeUndefined();
    await t.close();
  });

  it("starts without a web build, says so in the log, and serves the API", async () => {
    const lines: string[] = [];
    const t = await makeTestApp({
      config: { webDir: join(dir, "absent") },
      logger: { level: "warn", stream: { write: (l: string) => void lines.push(l) } },
    });
    expect(lines.join("")).toContain("dashboard not served: no web build");
    const res = await t.call({ method: "GET", url: "/", auth: null });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.message).toBe("Route GET / not found");
    expect((await t.call({ method: "GET", url: "/api/v1/keys" })).statusCode).toBe(200);
    await t.close();
  });
});
