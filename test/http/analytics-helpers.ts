import type { TestApp } from "../helpers/app.js";

export const CLF = "11111111-1111-4111-8111-111111111111";

export const query = (t: TestApp, payload: unknown, auth?: string | null) =>
  t.call({ method: "POST", url: "/api/v1/analytics/query", payload: payload as object, auth });

/** A created key: its secret, hash and numeric id (the analytics `api_key_id`). */
export async function createKey(
  t: TestApp,
  name: string,
  extra: Record<string, unknown> = {},
): Promise<{ key: string; hash: string; id: number }> {
  const res = await t.call({ method: "POST", url: "/api/v1/keys", payload: { name, ...extra } });
  if (res.statusCode !== 201) throw new Error(`key create failed: ${res.body}`);
  const body = res.json();
  const row = await t.ctx.store.db
    .selectFrom("api_keys")
    .select("id")
    .where("hash", "=", body.data.hash)
    .executeTakeFirstOrThrow();
  return { key: body.key, hash: body.data.hash, id: Number(row.id) };
}

export async function createWorkspace(t: TestApp, name: string, slug: string): Promise<string> {
  const res = await t.call({ method: "POST", url: "/api/v1/workspaces", payload: { name, slug } });
  if (res.statusCode !== 201) throw new Error(`workspace create failed: ${res.body}`);
  return res.json<{ data: { id: string } }>().data.id;
}
