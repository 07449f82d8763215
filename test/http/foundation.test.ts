import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { READINESS_CHECK_TIMEOUT_MS } from "../../src/http/routes/health.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";

describe("foundation", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp();
  });
  afterAll(() => t.close());

  it("answers liveness and readiness", async () => {
    expect((await t.call({ method: "GET", url: "/healthz", auth: null })).json()).toEqual({ status: "ok" });
    const ready = await t.call({ method: "GET", url: "/readyz", auth: null });
    expect(ready.statusCode).toBe(200);
    expect(ready.json().checks.record_store).toBe("ok");
  });

  it("answers unknown routes with the error envelope", async () => {
    const res = await t.call({ method: "GET", url: "/api/v1/no-such-thing" });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: { code: 404, message: expect.any(String), metadata: null } });
  });

  it("serves an OpenAPI 3.1 document", async () => {
    const res = await t.call({ method: "GET", url: "/api/v1/openapi.json", auth: null });
    expect(res.statusCode).toBe(200);
    expect(res.json().openapi).toBe("3.1.0");
  });

  it(`readiness fails with 503 within READINESS_CHECK_TIMEOUT_MS (${READINESS_CHECK_TIMEOUT_MS} ms) when a store stalls`, async () => {
    const stalled = await makeTestApp();
    // A store whose connection hangs: ping never settles.
    stalled.ctx.activity.ping = () => new Promise<void>(() => undefined);
    const started = performance.now();
    const res = await stalled.app.inject({ method: "GET", url: "/readyz" });
    const took = performance.now() - started;
    expect(res.statusCode).toBe(503);
    expect(res.json().error.metadata.checks).toEqual({ record_store: "ok", activity_store: "unreachable" });
    expect(took).toBeGreaterThanOrEqual(READINESS_CHECK_TIMEOUT_MS - 50);
    expect(took).toBeLessThan(READINESS_CHECK_TIMEOUT_MS + 3_000);
    await stalled.close();
  });

  it("readiness fails with 503 when the record store is unreachable", async () => {
    const broken = await makeTestApp();
    await broken.ctx.store.close();
    const res = await broken.app.inject({ method: "GET", url: "/readyz" });
    expect(res.statusCode).toBe(503);
    expect(res.json().error.code).toBe(503);
    await broken.app.close();
  });
});
