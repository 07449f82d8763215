import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

  it("readiness fails with 503 when the record store is unreachable", async () => {
    const broken = await makeTestApp();
    await broken.ctx.store.close();
    const res = await broken.app.inject({ method: "GET", url: "/readyz" });
    expect(res.statusCode).toBe(503);
    expect(res.json().error.code).toBe(503);
    await broken.app.close();
  });
});
