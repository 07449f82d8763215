import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findDestination } from "../../src/domain/destinations/destination-repo.js";
import { openConfig } from "../../src/domain/destinations/destination-record.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";

/**
 * Credentials in a destination URL's userinfo are masked on every read, also when the user name is
 * an e-mail address. URL parsers end the userinfo at the authority's last `@`
 * (`https://alice@corp.com:pass@host` has user `alice@corp.com`), but the mask ended it at the
 * first, so GET and list answered `https://****@corp.com:<password>@host`.
 */
const BASE = "/api/v1/observability/destinations";
const PASSWORD = "LEAK-pass-0123456789";
const HOST = `https://alice@corp.com:${PASSWORD}@ch.example.com:8443/db`;

describe("URL credentials in destination configs", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp();
  });
  afterAll(() => t.close());

  it("a user name with @ does not uncover the password on create, get, list or update", async () => {
    const created = await t.call({
      method: "POST",
      url: BASE,
      payload: {
        name: "ch",
        type: "clickhouse",
        config: { host: HOST, database: "traces", username: "default", password: "ch-password-0123456789" },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().data.id as string;
    const masked = "https://****:****@ch.example.com:8443/db";
    expect(created.json().data.config.host).toBe(masked);

    const got = await t.call({ method: "GET", url: `${BASE}/${id}` });
    const listed = await t.call({ method: "GET", url: BASE });
    // Echoing the masked config back keeps the stored URL.
    const patched = await t.call({
      method: "PATCH",
      url: `${BASE}/${id}`,
      payload: { config: got.json().data.config },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    for (const r of [created, got, listed, patched]) {
      expect(r.body).not.toContain("LEAK");
      expect(r.body).not.toContain("corp.com");
    }
    expect(got.json().data.config.host).toBe(masked);
    expect(patched.json().data.config.host).toBe(masked);
    const row = await findDestination(t.ctx.store.db, t.organizationId, id);
    expect(openConfig(t.ctx.secretBox, row!).host).toBe(HOST);
  });

  it("an @ in the path or query is not userinfo; several @ in the userinfo are", async () => {
    for (const [endpoint, shown] of [
      ["https://otel.example.com/v1/traces?tag=a@b", "https://otel.example.com/v1/traces?tag=a@b"],
      ["https://a@b@c:LEAK-x@otel.example.com/v1", "https://****:****@otel.example.com/v1"],
      ["https://LEAK-token@otel.example.com", "https://****@otel.example.com"],
    ]) {
      const r = await t.call({
        method: "POST",
        url: BASE,
        payload: { name: "otel", type: "otel-collector", config: { endpoint } },
      });
      expect(r.statusCode, r.body).toBe(201);
      expect(r.json().data.config.endpoint).toBe(shown);
      expect(r.body).not.toContain("LEAK");
    }
  });
});
