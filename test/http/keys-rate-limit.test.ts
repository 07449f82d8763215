import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";

describe("API key rate limits", () => {
  let t: TestApp;
  beforeAll(async () => {
    const defaults = loadConfig({ GATEHOUSE_DATA_DIR: "/tmp/gatehouse-test" });
    t = await makeTestApp({
      config: {
        rateLimit: {
          ...defaults.rateLimit,
          management: { max: 3, windowMs: 60_000 },
          keyUpdate: { max: 2, windowMs: 60_000 },
        },
      },
    });
  });
  afterAll(() => t.close());

  const expect429 = (res: Awaited<ReturnType<TestApp["call"]>>) => {
    expect(res.statusCode).toBe(429);
    expect(res.headers["retry-after"]).toMatch(/^\d+$/);
    expect(res.json()).toEqual({
      error: { code: 429, message: expect.stringContaining("Rate limit exceeded"), metadata: null },
    });
  };

  it("limits PATCH with the key-update limit and applies nothing once exceeded", async () => {
    const created = await t.call({ method: "POST", url: "/api/v1/keys", payload: { name: "a" } });
    expect(created.statusCode).toBe(201);
    const hash = created.json().data.hash;
    const patch = (name: string) =>
      t.call({ method: "PATCH", url: `/api/v1/keys/${hash}`, payload: { name } });
    expect((await patch("b")).statusCode).toBe(200);
    expect((await patch("c")).statusCode).toBe(200);
    expect429(await patch("d"));
    const now = await t.call({ method: "GET", url: `/api/v1/keys/${hash}` });
    expect(now.json().data.name).toBe("c");
  });

  it("limits the other operations with the management limit", async () => {
    // GET /keys has its own counter: 3 allowed, the 4th refused.
    for (let i = 0; i < 3; i++)
      expect((await t.call({ method: "GET", url: "/api/v1/keys" })).statusCode).toBe(200);
    expect429(await t.call({ method: "GET", url: "/api/v1/keys" }));
    for (let i = 0; i < 3; i++)
      expect((await t.call({ method: "GET", url: "/api/v1/key" })).statusCode).toBe(200);
    expect429(await t.call({ method: "GET", url: "/api/v1/key" }));
  });

  it("counts per key and per operation", async () => {
    const other = await t.call({ method: "POST", url: "/api/v1/keys", payload: { name: "ordinary" } });
    // POST /keys: one call in the previous test, one just now, one more allowed.
    expect((await t.call({ method: "POST", url: "/api/v1/keys", payload: { name: "x" } })).statusCode).toBe(
      201,
    );
    expect429(await t.call({ method: "POST", url: "/api/v1/keys", payload: { name: "y" } }));
    // Another key has its own budget on GET /key.
    expect((await t.call({ method: "GET", url: "/api/v1/key", auth: other.json().key })).statusCode).toBe(
      200,
    );
  });
});
