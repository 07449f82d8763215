import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestApp, type TestApp } from "../helpers/app.js";

/**
 * Auth fails closed: every registered route either declares its mode or gets management auth,
 * and each route behaves as its mode says, walked route by route (no key: 401 unless public; an
 * ordinary key: 403 on management routes).
 */
describe("auth modes of every registered route", () => {
  let t: TestApp;
  let ordinaryKey: string;

  beforeAll(async () => {
    t = await makeTestApp();
    // Registered like any route, before the app is ready, without an auth setting.
    t.app.get("/api/v1/undeclared-test-route", async () => ({ reached: true }));
    const res = await t.call({ method: "POST", url: "/api/v1/keys", payload: { name: "ordinary" } });
    expect(res.statusCode).toBe(201);
    ordinaryKey = res.json<{ key: string }>().key;
  });
  afterAll(async () => t.close());

  const concrete = (url: string) => url.replace(/:[a-z_]+/g, "x");

  it("the only public API routes are the OpenAPI document and the model catalog, and they say so", () => {
    const routes = t.app.authRoutes;
    expect(routes.length).toBeGreaterThan(20);
    const publicRoutes = routes.filter((r) => r.auth === "none");
    // Under /api/v1: the contract, and what the install can route to (public in the hosted
    // original too). Outside it: the health checks, and the dashboard's static files when built.
    expect(new Set(publicRoutes.filter((r) => r.url.startsWith("/api/")).map((r) => r.url))).toEqual(
      new Set([
        "/api/v1/openapi.json",
        "/api/v1/models",
        "/api/v1/models/count",
        "/api/v1/models/*", // /models/{author}/{slug}/endpoints
        "/api/v1/model/*", // /model/{author}/{slug}
        "/api/v1/providers",
        "/api/v1/embeddings/models", // the embedding models, as public as /models
      ]),
    );
    const outside = new Set(publicRoutes.filter((r) => !r.url.startsWith("/api/")).map((r) => r.url));
    expect(outside).toContain("/healthz");
    expect(outside).toContain("/readyz");
    for (const url of outside) expect(url).toMatch(/^\/(healthz|readyz|index\.html|assets\/.+|[\w.-]+)$/);
    for (const r of publicRoutes) expect(r.declared).toBe(true);
    const undeclared = routes.filter((r) => !r.declared);
    expect(undeclared.map((r) => r.url)).toContain("/api/v1/undeclared-test-route");
    for (const r of undeclared) expect(r.auth).toBe("management");
  });

  it("walks every route: without a key 401 unless public; with an ordinary key 403 unless public or any-key", async () => {
    for (const r of t.app.authRoutes) {
      const url = concrete(r.url);
      const anonymous = await t.call({ method: r.method, url, auth: null });
      if (r.auth === "none") expect(anonymous.statusCode, `${r.method} ${url}`).not.toBe(401);
      else expect(anonymous.statusCode, `${r.method} ${url}`).toBe(401);

      const ordinary = await t.call({ method: r.method, url, auth: ordinaryKey });
      if (r.auth === "management") expect(ordinary.statusCode, `${r.method} ${url}`).toBe(403);
      else expect([401, 403], `${r.method} ${url}`).not.toContain(ordinary.statusCode);
    }
  });

  it("a route without an auth setting requires a management key", async () => {
    expect(
      (await t.call({ method: "GET", url: "/api/v1/undeclared-test-route", auth: null })).statusCode,
    ).toBe(401);
    expect(
      (await t.call({ method: "GET", url: "/api/v1/undeclared-test-route", auth: ordinaryKey })).statusCode,
    ).toBe(403);
    const ok = await t.call({ method: "GET", url: "/api/v1/undeclared-test-route" });
    expect(ok.json()).toEqual({ reached: true });
  });
});
