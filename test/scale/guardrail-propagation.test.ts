import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PolicyCache } from "../../src/domain/policy/policy-cache.js";
import { recordStoreLoader } from "../../src/domain/policy/policy-loader.js";
import { POLICY_PROPAGATION_BOUND_MS } from "../../src/domain/policy/policy.js";
import { openPostgresStore } from "../../src/stores/postgres/open-postgres.js";
import { pgPolicyChannel } from "../../src/stores/postgres/pg-policy-channel.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";
import { PG_SKIP_REASON, PG_URL, freshPostgresDatabase } from "../helpers/stores.js";
import { within } from "../helpers/within.js";
import { G, newKey, newMember, ok } from "../http/guardrails-helpers.js";

/**
 * Guardrail writes through the API reach another instance's policy cache within
 * POLICY_PROPAGATION_BOUND_MS on PostgreSQL (docs/guardrails.md "Policy cache"): the other
 * instance is a second PolicyCache listening on the database's change channel, as main.ts builds
 * one, holding the organization's guardrails cached when the change is made.
 */
const SKIP = !PG_URL;
if (SKIP) console.warn(PG_SKIP_REASON);

describe.skipIf(SKIP)("guardrail changes reach another instance's policy cache", () => {
  let db: { url: string; drop: () => Promise<void> };
  let store: RecordStore;
  let t: TestApp;
  let other: PolicyCache;

  beforeAll(async () => {
    db = await freshPostgresDatabase();
    store = await openPostgresStore(db.url, 5);
    t = await makeTestApp({ store });
    let listening!: () => void;
    const up = new Promise<void>((resolve) => (listening = resolve));
    other = new PolicyCache(recordStoreLoader(store.db), {
      channel: pgPolicyChannel(db.url, { onEvent: (e) => e === "listening" && listening() }),
    });
    await up;
    expect(other.caching).toBe(true);
  }, 30_000);

  afterAll(async () => {
    await other?.close();
    await t?.close();
    await store?.close();
    await db?.drop();
  });

  /** Waits for `seen` on the other instance; how long it took. */
  const seenWithin = (seen: (o: Awaited<ReturnType<PolicyCache["guardrails"]>>) => boolean) =>
    within(5_000, async () => seen(await other.guardrails(t.organizationId)));

  it("a created guardrail, an assignment, an update and a delete are each seen within the bound", async () => {
    const before = await other.guardrails(t.organizationId);
    expect(await other.guardrails(t.organizationId)).toBe(before); // cached
    const g = (await ok(t, "POST", G, { name: "propagated" })).data.id as string;
    expect(await seenWithin((o) => o.byId.has(g))).toBeLessThan(POLICY_PROPAGATION_BOUND_MS);

    const key = await newKey(t, "propagated");
    await ok(t, "POST", `${G}/${g}/assignments/keys`, { key_hashes: [key] });
    expect(await seenWithin((o) => o.keyAssignments.get(key) === g)).toBeLessThan(
      POLICY_PROPAGATION_BOUND_MS,
    );

    const member = await newMember(t, "propagated@example.com");
    await ok(t, "POST", `${G}/${g}/assignments/members`, { member_user_ids: [member] });
    expect(await seenWithin((o) => o.memberAssignments.get(member) === g)).toBeLessThan(
      POLICY_PROPAGATION_BOUND_MS,
    );

    await ok(t, "PATCH", `${G}/${g}`, { allowed_models: ["mock/echo"] });
    expect(await seenWithin((o) => o.byId.get(g)?.rules.allowedModels?.[0] === "mock/echo")).toBeLessThan(
      POLICY_PROPAGATION_BOUND_MS,
    );

    await ok(t, "DELETE", `/api/v1/keys/${key}`);
    expect(await seenWithin((o) => !o.keyAssignments.has(key))).toBeLessThan(POLICY_PROPAGATION_BOUND_MS);

    await ok(t, "DELETE", `${G}/${g}`);
    expect(await seenWithin((o) => o.byId.size === 0 && o.memberAssignments.size === 0)).toBeLessThan(
      POLICY_PROPAGATION_BOUND_MS,
    );
  });
});
