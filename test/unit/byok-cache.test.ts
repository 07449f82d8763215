import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KyselyPlugin } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { ByokRouting } from "../../src/gateway/byok/byok-routing.js";
import type { Attempt } from "../../src/gateway/chat/attempts.js";
import { SecretBox } from "../../src/lib/secret-box.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";

/**
 * The BYOK cache and a write made while a read is in flight: on PostgreSQL a read on one pooled
 * connection can return the rows from before a write committed on another, after `forget` ran.
 * Here the read's result is held at a gate (a Kysely plugin) to make that order, and the write goes
 * through a second connection to the same file (SQLite's one connection would wait for the read).
 */
const ORG = "org-1";
const WS = "ws-1";
const box = new SecretBox(randomBytes(32));
const opened: RecordStore[] = [];
let dir: string | null = null;
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

async function insertKey(s: RecordStore, secret: string, sortOrder: number): Promise<void> {
  const id = randomUUID();
  const now = new Date().toISOString();
  await s.db
    .insertInto("byok_keys")
    .values({
      id,
      organization_id: ORG,
      workspace_id: WS,
      provider: "alpha",
      name: null,
      label: "sk-…",
      key_ciphertext: box.seal(secret, id),
      disabled: 0,
      is_fallback: 0,
      is_required: 0,
      is_byok_only: 0,
      declared_zdr: null,
      sort_order: sortOrder,
      allowed_models: null,
      allowed_user_ids: null,
      allowed_api_key_hashes: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
}

const attempt = { provider: { slug: "alpha" }, model: { id: "m/one" } } as unknown as Attempt;
const who = { organizationId: ORG, workspaceId: WS, keyHash: "h", creatorUserId: null };
const secrets = (as: Attempt[]) => as.map((a) => a.byok?.secret ?? "platform");

describe("BYOK cache", () => {
  it("a read in flight across a write serves its request but is not cached: the next request sees the write", async () => {
    dir = mkdtempSync(join(tmpdir(), "gatehouse-byok-cache-"));
    const store = await openSqliteStore(join(dir, "gatehouse.sqlite"));
    const writer = await openSqliteStore(join(dir, "gatehouse.sqlite"));
    opened.push(store, writer);
    await insertKey(store, "sk-old", 0);
    let release: () => void = () => undefined;
    let held = false;
    const gate: KyselyPlugin = {
      transformQuery: (a) => a.node,
      transformResult: async (a) => {
        if (held) await new Promise<void>((r) => (release = r));
        return a.result;
      },
    };
    const routing = new ByokRouting(store.db.withPlugin(gate), box);
    held = true;
    const inFlight = routing.expand([attempt], who); // reads [sk-old], held at the gate
    await new Promise((r) => setTimeout(r, 20));
    held = false;
    await insertKey(writer, "sk-new", -1); // a write on this instance: it forgets the organization
    routing.forget(ORG);
    release();
    expect(secrets(await inFlight)).toEqual(["sk-old", "platform"]);
    expect(secrets(await routing.expand([attempt], who))).toEqual(["sk-new", "sk-old", "platform"]);
  });
});
