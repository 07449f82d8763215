import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

/**
 * The dashboard's Content-Security-Policy: everything from this origin only, no inline script or
 * style element, no eval, no framing, no third-party origin (it works on a network without
 * internet). Inline `style` attributes are not needed either: the bundle sets styles through the
 * CSSOM, which the policy does not govern.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy": DASHBOARD_CSP,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "permissions-policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
};

function setSecurityHeaders(reply: FastifyReply): void {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) void reply.header(name, value);
}

/** Paths that belong to the API or the probes: never answered with the dashboard's page. */
const API_PATH = /^\/(api(\/|$)|healthz$|readyz$)/;

/**
 * Serves the built dashboard (web/, built by `npm run build:web` into `webDir`) at `/`: hashed
 * assets with a long cache and their precompressed .br/.gz siblings, and index.html for every other
 * GET of a non-API path (the dashboard routes in the browser). Returns the fallback the app's
 * not-found handler calls first, or null when there is no build (the API is served as usual).
 */
export async function registerDashboard(
  app: FastifyInstance,
  webDir: string,
): Promise<((request: FastifyRequest, reply: FastifyReply) => boolean) | null> {
  const indexPath = join(webDir, "index.html");
  if (!existsSync(indexPath)) {
    app.log.warn(
      { webDir },
      "dashboard not served: no web build (run `npm run build:web`); the API works as usual",
    );
    return null;
  }
  const indexHtml = readFileSync(indexPath);
  await app.register(async (scope) => {
    scope.addHook("onSend", async (_request, reply) => setSecurityHeaders(reply));
    // The dashboard's files are public (the page signs in with a key it then sends to the API).
    scope.addHook("onRoute", (route) => {
      route.config = { ...route.config, auth: "none" };
    });
    await scope.register(fastifyStatic, {
      root: webDir,
      prefix: "/",
      wildcard: false,
      index: false,
      preCompressed: true,
      cacheControl: false,
      setHeaders: (res, path) => {
        // Files under assets/ have a content hash in their name: cache them for good.
        void res.header(
          "cache-control",
          path.includes("/assets/") ? "public, max-age=31536000, immutable" : "no-cache",
        );
      },
    });
  });
  return (request, reply) => {
    const path = request.url.split("?")[0] ?? "/";
    if (request.method !== "GET" && request.method !== "HEAD") return false;
    // Unknown API routes keep the JSON envelope; a missing file (a dot in the last segment) too.
    if (API_PATH.test(path) || /\.[^/]*$/.test(path)) return false;
    setSecurityHeaders(reply);
    void reply.header("cache-control", "no-cache").type("text/html; charset=utf-8").send(indexHtml);
    return true;
  };
}
