import { describe, expect, it } from "vitest";
import { useAppOnStore } from "../helpers/app.js";
import { STORE_FACTORIES } from "../helpers/stores.js";

/**
 * PATCH /keys/{hash} with `expires_at`, a Gatehouse extension (docs/api-notes.md): extend, shorten
 * or clear a key's expiry, validated exactly like POST /keys, and effective for authentication at
 * once. Run on SQLite and PostgreSQL. The test clock starts at 2026-11-18T12:00:00Z.
 */

/** Every bad `expires_at`, with the message POST /keys gives; PATCH must give the same. */
const BAD_EXPIRIES: [unknown, string][] = [
  ["2027-01-01T00:00Z", "expires_at: must be a valid date-time"],
  ["2027-01-01T00:00:00+02:00", "expires_at: must be a UTC timestamp with seconds"],
  ["2027-01-01 00:00:00Z", "expires_at: must be a UTC timestamp with seconds"],
  ["2027-02-30T00:00:00Z", "expires_at: must be a valid date-time"],
  ["2026-11-18T11:59:59Z", "expires_at: must be in the future"],
  ["2026-11-18T12:00:00Z", "expires_at: must be in the future"],
  [1767225600, "expires_at: must be string or null"],
  ["2027-01-01T00:00:00", "expires_at: must be a valid date-time"],
  ["", "expires_at: must be a valid date-time"],
  [true, "expires_at: must be string or null"],
];

for (const f of STORE_FACTORIES) {
  describe.skipIf(f.skip)(`PATCH /keys/{hash} expires_at on ${f.name}`, () => {
    const env = useAppOnStore(f);

    const raw = (method: "POST" | "PATCH", url: string, body: unknown) =>
      env.t.call({
        method,
        url,
        payload: JSON.stringify(body),
        headers: { "content-type": "application/json" },
      });
    const patch = (hash: string, body: unknown) => raw("PATCH", `/api/v1/keys/${hash}`, body);
    const get = async (hash: string) =>
      (await env.t.call({ method: "GET", url: `/api/v1/keys/${hash}` })).json().data as Record<
        string,
        unknown
      >;
    const authStatus = async (key: string) =>
      (await env.t.call({ method: "GET", url: "/api/v1/key", auth: key })).statusCode;
    const newKey = async (body: Record<string, unknown> = {}) => {
      const res = await raw("POST", "/api/v1/keys", { name: "expiring", ...body });
      expect(res.statusCode).toBe(201);
      return res.json<{ data: Record<string, any>; key: string }>();
    };

    it("extends an expiry, storing the canonical form; nothing else changes but updated_at", async () => {
      const { data } = await newKey({ expires_at: "2026-12-01T00:00:00Z", limit: 4 });
      env.t.clock.advance(1000);
      const res = await patch(data.hash, { expires_at: "2027-03-31T23:59:59Z" });
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual({
        ...data,
        expires_at: "2027-03-31T23:59:59.000Z",
        updated_at: env.t.clock.now().toISOString(),
      });
      expect(await get(data.hash)).toEqual(res.json().data);
      // Fractions are kept to the millisecond, like on create.
      const frac = await patch(data.hash, { expires_at: "2027-04-01T10:00:00.25Z" });
      expect(frac.json().data.expires_at).toBe("2027-04-01T10:00:00.250Z");
    });

    it("clears an expiry with null: the key outlives its old expiry", async () => {
      const { data, key } = await newKey({ expires_at: "2026-11-18T13:00:00Z" });
      const res = await patch(data.hash, { expires_at: null });
      expect(res.statusCode).toBe(200);
      expect(res.json().data.expires_at).toBeNull();
      const saved = env.t.clock.now();
      env.t.clock.set("2026-11-18T14:00:00.000Z");
      expect(await authStatus(key)).toBe(200);
      env.t.clock.set(saved);
    });

    it("takes effect for authentication at once: an expired key extended works again, a shortened one stops", async () => {
      const { data, key } = await newKey({ expires_at: "2026-11-18T12:30:00Z" });
      expect(await authStatus(key)).toBe(200); // the policy cache now holds the key
      const saved = env.t.clock.now();
      env.t.clock.set("2026-11-18T12:45:00.000Z");
      expect(await authStatus(key)).toBe(401);
      expect((await patch(data.hash, { expires_at: "2026-11-18T13:00:00Z" })).statusCode).toBe(200);
      expect(await authStatus(key)).toBe(200);
      env.t.clock.set("2026-11-18T13:00:00.000Z");
      expect(await authStatus(key)).toBe(401);
      env.t.clock.set(saved);
      // Shortening: still valid until the new instant, refused from it.
      const other = await newKey({ expires_at: "2027-01-01T00:00:00Z" });
      expect(await authStatus(other.key)).toBe(200);
      const soon = new Date(saved.getTime() + 60_000).toISOString();
      expect((await patch(other.data.hash, { expires_at: soon })).statusCode).toBe(200);
      expect(await authStatus(other.key)).toBe(200);
      env.t.clock.set(soon);
      expect(await authStatus(other.key)).toBe(401);
      env.t.clock.set(saved);
    });

    it("sets an expiry on a key that had none, together with other fields in one change", async () => {
      const { data } = await newKey();
      expect(data.expires_at).toBeNull();
      const res = await patch(data.hash, { expires_at: "2027-06-30T00:00:00Z", name: "renamed", limit: 9 });
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toMatchObject({
        name: "renamed",
        limit: 9,
        expires_at: "2027-06-30T00:00:00.000Z",
      });
    });

    it.each(BAD_EXPIRIES)(
      "rejects expires_at %j with the same 400 as POST /keys, applying nothing",
      async (value, message) => {
        const created = await raw("POST", "/api/v1/keys", { name: "k", expires_at: value });
        expect(created.statusCode).toBe(400);
        expect(created.json().error.message).toContain(message);

        const { data } = await newKey({ expires_at: "2027-01-01T00:00:00Z", limit: 2 });
        env.t.clock.advance(1000);
        const res = await patch(data.hash, { name: "changed", expires_at: value });
        expect(res.statusCode).toBe(400);
        expect(res.json()).toEqual({
          error: { code: 400, message: expect.stringContaining(message), metadata: null },
        });
        expect(res.json().error.message).toBe(created.json().error.message);
        expect(await get(data.hash)).toEqual(data);
      },
    );

    it("is 404 for an unknown or deleted key even with a valid expiry", async () => {
      expect((await patch("b".repeat(64), { expires_at: "2027-01-01T00:00:00Z" })).statusCode).toBe(404);
      const { data } = await newKey();
      await env.t.call({ method: "DELETE", url: `/api/v1/keys/${data.hash}` });
      expect((await patch(data.hash, { expires_at: null })).statusCode).toBe(404);
    });
  });
}
