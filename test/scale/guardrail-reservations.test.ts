import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import type { GuardrailBudget } from "../../src/domain/guardrails/guardrail-policy.js";
import type { KeyPolicy, WorkspacePolicy } from "../../src/domain/policy/policy.js";
import { insertKey } from "../../src/domain/keys/key-repo.js";
import { createWorkspace } from "../../src/domain/workspaces/workspace-service.js";
import { addUsageTally, UsageTally } from "../../src/domain/usage/ledger.js";
import { committedUsageOf } from "../../src/domain/usage/committed-usage.js";
import { planHold } from "../../src/gateway/reservations/enforcement.js";
import { MemoryReservationStore } from "../../src/gateway/reservations/memory-store.js";
import { PostgresReservationStore } from "../../src/gateway/reservations/postgres-store.js";
import type { ReservationStore } from "../../src/gateway/reservations/reservation-store.js";
import { readCreatorUsage } from "../../src/gateway/reservations/creator-usage.js";
import { DomainError } from "../../src/domain/errors.js";
import { systemClock } from "../../src/lib/clock.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { openPostgresStore } from "../../src/stores/postgres/open-postgres.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";
import { holdRequest, keyPolicy, workspacePolicy } from "../helpers/policies.js";
import { freshPostgresDatabase, PG_SKIP_REASON, PG_URL } from "../helpers/stores.js";

/**
 * Guardrail budgets at the reservation store's level: a member's budget counts every key the
 * member created, across workspaces (the workspace lock alone does not serialise them), and a
 * key's budget its own spend. Lanes reserve through planHold (the gateway's decision) and settle
 * every admitted hold for its whole amount; were a reserve ever to miss another's hold or charge,
 * more than the budget would be admitted. On PostgreSQL with two instances (two pools, one
 * database) and on the in-process store over SQLite in a file.
 */

const HOLD = 1_000_000n;
const FITS = 20n;
const PRICES = {
  promptPerMTokNano: HOLD * 1_000_000n,
  completionPerMTokNano: 0n,
  cacheReadPerMTokNano: null,
  cacheWritePerMTokNano: null,
};

const dir = mkdtempSync(join(tmpdir(), "gatehouse-guardrail-holds-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Holder = "member" | "key";

interface Setup {
  stores: RecordStore[];
  instances: ReservationStore[];
  close: () => Promise<void>;
}

async function race(
  setup: Setup,
  holder: Holder,
): Promise<{ admitted: number; spent: bigint; refusals: DomainError[] }> {
  const [first] = setup.stores as [RecordStore];
  const org = await createOrganization(first, systemClock, `guardrails-${holder}`);
  const others = [];
  for (const n of [1, 2, 3]) {
    others.push(
      await createWorkspace(
        first,
        systemClock,
        { organizationId: org.organizationId, keyHash: "none" },
        { name: `Team ${n}`, slug: `team-${n}` },
      ),
    );
  }
  const spaces = [org.workspaceId, ...others.map((w) => w.id)].map((id) =>
    workspacePolicy({ id, organizationId: org.organizationId }, { isDefault: id === org.workspaceId }),
  );
  const creator = "user_race";
  // Member race: eight keys of one member in four workspaces; key race: one key.
  const keys: { key: KeyPolicy; ws: WorkspacePolicy }[] = (
    holder === "member" ? [0, 1, 2, 3, 4, 5, 6, 7] : [0]
  ).map((n) => {
    const ws = spaces[n % 4] as WorkspacePolicy;
    return { ws, key: keyPolicy(ws, `${holder}-key-${n}`, { id: n + 10, creatorUserId: creator }) };
  });
  for (const { key, ws } of keys) {
    await insertKey(first.db, {
      hash: key.hash,
      label: "sk-gh-v1-abc...xyz",
      organizationId: org.organizationId,
      workspaceId: ws.id,
      name: key.hash,
      isManagement: false,
      limitNano: null,
      limitReset: null,
      includeByokInLimit: false,
      creatorUserId: creator,
      externalUser: null,
      externalKeyHash: null,
      expiresAt: null,
      now: new Date(),
    });
  }
  const budget: GuardrailBudget = {
    guardrailId: "g-1",
    name: "Team cap",
    holder,
    limitNano: HOLD * FITS,
    interval: "monthly",
    includeByok: false,
  };
  let admitted = 0;
  const refusals: DomainError[] = [];
  let n = 0;
  await Promise.all(
    Array.from({ length: 32 }, async (_, lane) => {
      const store = setup.stores[lane % setup.stores.length] as RecordStore;
      const rs = setup.instances[lane % setup.instances.length] as ReservationStore;
      const { key, ws } = keys[lane % keys.length]!;
      for (let attempt = 0; attempt < 6; attempt++) {
        const id = `race-${holder}-${++n}`;
        try {
          await rs.reserve(holdRequest(ws, key, id, { guardrailBudgets: [budget] }), (room) =>
            planHold(room, {
              prices: PRICES,
              promptTokens: 1,
              requestedMaxTokens: 0,
              modelMaxCompletionTokens: 1,
            }),
          );
        } catch (err) {
          if (!(err instanceof DomainError)) throw err;
          refusals.push(err);
          continue;
        }
        admitted++;
        await rs.settle(
          id,
          () =>
            // As a generation's record does (record-acceptance.ts): announced to the process's
            // copy of committed totals, then written.
            store.transaction(async (trx) => {
              const tally = new UsageTally();
              tally.add(org.organizationId, key.hash, ws.id, Date.now(), HOLD, 0n);
              const rows = tally.rows();
              committedUsageOf(store)?.noteWrite(trx, rows);
              await addUsageTally(trx, rows, store.caps);
            }),
          HOLD,
        );
      }
    }),
  );
  expect(admitted + refusals.length).toBe(32 * 6);
  const spent = (await readCreatorUsage(first.db, org.organizationId, creator, new Date())).month.usage;
  return { admitted, spent, refusals };
}

function checks(setupOf: () => Promise<Setup>): void {
  it.each<Holder>(["member", "key"])(
    "a %s guardrail budget never admits more than it holds; what is settled is what was admitted",
    async (holder) => {
      const setup = await setupOf();
      try {
        const { admitted, spent, refusals } = await race(setup, holder);
        expect(BigInt(admitted)).toBeLessThanOrEqual(FITS);
        expect(admitted).toBeGreaterThanOrEqual(10);
        expect(spent).toBe(HOLD * BigInt(admitted));
        const r = refusals[0] as DomainError;
        expect(r.status).toBe(403);
        expect(r.message).toContain("guardrail 'Team cap'");
        expect(r.metadata).toMatchObject({
          scope: "guardrail",
          guardrail_id: "g-1",
          rule: "limit_usd",
          holder,
          interval: "monthly",
        });
      } finally {
        await setup.close();
      }
    },
    60_000,
  );
}

describe("guardrail budgets: in-process reservations over SQLite in a file", () => {
  checks(async () => {
    const store = await openSqliteStore(join(dir, `${Math.random()}.sqlite`));
    return {
      stores: [store],
      instances: [new MemoryReservationStore(store, 60_000)],
      close: () => store.close(),
    };
  });
});

if (!PG_URL) console.warn(`guardrail reservations on PostgreSQL: ${PG_SKIP_REASON}`);
describe.skipIf(!PG_URL)("guardrail budgets: PostgreSQL, two instances", () => {
  checks(async () => {
    const db = await freshPostgresDatabase();
    const stores = [await openPostgresStore(db.url, 8), await openPostgresStore(db.url, 8)];
    return {
      stores,
      instances: stores.map((s) => new PostgresReservationStore(s, 60_000)),
      close: async () => {
        for (const s of stores) await s.close();
        await db.drop();
      },
    };
  });
});
