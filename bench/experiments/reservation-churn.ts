/**
 * PostgreSQL's shared holds under sustained load: every request inserts a row in
 * `gateway_reservations` and deletes it, and every reserve sums the workspace's open holds, so
 * the dead rows left behind slow each reserve down until the table is vacuumed. Two databases
 * side by side, each with one workspace holding --open long-lived holds and --lanes requests
 * reserving and settling as fast as they can:
 *
 *   autovacuum   the store leaves the table to the server's autovacuum (vacuumRows 0);
 *   instance     the store vacuums the table itself every --vacuum-rows rows it drops
 *                (GATEHOUSE_RESERVATION_VACUUM_ROWS, the default).
 *
 * Windows of --window-s seconds alternate between the two (A B A B …) for --windows windows
 * each; printed per window: reserve + settle pairs per second on each side, their ratio, and the
 * dead rows each table holds (pg_stat_user_tables). The server's autovacuum settings are printed
 * first: with autovacuum on, its naptime (1 min by default) bounds how often it can help.
 *
 *   npx tsx bench/experiments/reservation-churn.ts --postgres postgres://postgres@127.0.0.1:5432/test
 *                                      [--windows 8] [--window-s 5] [--lanes 8] [--open 2000]
 *                                      [--vacuum-rows 2000]
 */
import pg from "pg";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { PostgresReservationStore } from "../../src/gateway/reservations/postgres-store.js";
import type { HoldRequest } from "../../src/gateway/reservations/room.js";
import { systemClock } from "../../src/lib/clock.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { openPostgresStore } from "../../src/stores/postgres/open-postgres.js";
import {
  fixedPlan,
  holdRequest,
  keyPolicy,
  monthlyBudget,
  workspacePolicy,
} from "../../test/helpers/policies.js";
import { numberOption, stringOption } from "../lib/args.js";
import { freshPostgresDatabase } from "../lib/fresh-postgres.js";

const args = process.argv.slice(2);
const opt = numberOption(args);
const PG_URL = stringOption(args)("postgres") ?? "postgres://postgres@127.0.0.1:5432/test";
const WINDOWS = opt("windows", 8);
const WINDOW_S = opt("window-s", 5);
const LANES = opt("lanes", 8);
const OPEN = opt("open", 2000);
const VACUUM_ROWS = opt("vacuum-rows", 2000);
const LIMIT = 10n ** 18n;
const HOLD_NANO = 1_000n;
const plan = fixedPlan(HOLD_NANO);

interface Side {
  label: string;
  store: RecordStore;
  rs: PostgresReservationStore;
  stats: pg.Client;
  request: (id: string) => HoldRequest;
  drop: () => Promise<void>;
}

async function side(label: string, vacuumRows: number): Promise<Side> {
  const db = await freshPostgresDatabase(PG_URL);
  const store = await openPostgresStore(db.url, LANES + 2);
  const org = await createOrganization(store, systemClock, `churn ${label}`);
  const ws = workspacePolicy(
    { id: org.workspaceId, organizationId: org.organizationId },
    { budgets: [monthlyBudget(LIMIT)] },
  );
  const key = keyPolicy(ws, `churn-${label}`, { limitNano: LIMIT });
  const rs = new PostgresReservationStore(store, 10 * 60_000, { vacuumRows });
  const stats = new pg.Client({ connectionString: db.url });
  await stats.connect();
  // As the gateway does: the hold's amount as expected (it is what plan() decides).
  const request = (id: string): HoldRequest => holdRequest(ws, key, id, { expectedNano: HOLD_NANO });
  for (let i = 0; i < OPEN; i++) await rs.reserve(request(`open-${i}`), plan);
  return {
    label,
    store,
    rs,
    stats,
    request,
    drop: async () => {
      await rs.close();
      await stats.end();
      await store.close();
      await db.drop();
    },
  };
}

let seq = 0;
/** Pairs per second over one window. */
async function window(s: Side): Promise<number> {
  let done = 0;
  const started = performance.now();
  const until = started + WINDOW_S * 1000;
  await Promise.all(
    Array.from({ length: LANES }, async () => {
      while (performance.now() < until) {
        const id = `c-${++seq}`;
        await s.rs.reserve(s.request(id), plan);
        await s.rs.settle(id, async () => undefined, 0n);
        done++;
      }
    }),
  );
  return (done * 1000) / (performance.now() - started);
}

async function deadRows(s: Side): Promise<string> {
  const r = await s.stats.query<{ n: string }>(
    "select n_dead_tup as n from pg_stat_user_tables where relname = 'gateway_reservations'",
  );
  return r.rows[0]?.n ?? "?";
}

const settings = new pg.Client({ connectionString: PG_URL });
await settings.connect();
const shown = await settings.query<{ name: string; setting: string }>(
  "select name, setting from pg_settings where name in ('autovacuum', 'autovacuum_naptime', 'autovacuum_vacuum_threshold', 'autovacuum_vacuum_scale_factor') order by name",
);
await settings.end();
console.log(`server: ${shown.rows.map((r) => `${r.name}=${r.setting}`).join(", ")}`);
console.log(`${LANES} lanes, ${OPEN} other holds open, windows of ${WINDOW_S} s alternating\n`);

const sides = [await side("autovacuum", 0), await side("instance", VACUUM_ROWS)] as const;
try {
  console.log(
    `| window | autovacuum: pairs/s (dead rows) | instance, every ${VACUUM_ROWS}: pairs/s (dead rows) | instance / autovacuum |`,
  );
  console.log("| --- | --- | --- | --- |");
  for (let w = 1; w <= WINDOWS; w++) {
    const a = await window(sides[0]);
    const b = await window(sides[1]);
    console.log(
      `| ${w} | ${a.toFixed(0)} (${await deadRows(sides[0])}) | ${b.toFixed(0)} (${await deadRows(sides[1])}) | ${((100 * b) / a).toFixed(0)} % |`,
    );
  }
  console.log(`\nvacuums run by the instance: ${sides[1].rs.vacuums}`);
} finally {
  for (const s of sides) await s.drop();
}
