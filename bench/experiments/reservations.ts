/**
 * The cost of one reservation (reserve, then settle: an answered request; its charge, the record,
 * is left out) against the number of other holds open,
 * as on a gateway whose streams last tens of seconds: at 100 requests/s and 30 s per answer, 3,000
 * holds are open at any time. Every hold is in one workspace (the worst case: one company-wide
 * workspace), spread over 50 keys; the timed reserves are of one of those keys.
 *
 * Two reservation stores of the same kind side by side in one process: `empty` (no other hold
 * open: the baseline) and `loaded` (N others open). Rounds alternate between them, so both see the
 * same machine; printed per N: µs per reserve + settle on each, and loaded / empty.
 *
 * The in-process store (embedded SQLite in a file, the committed copy) always; PostgreSQL's
 * shared store too with --postgres URL (a database is created there and dropped after), and then
 * its throughput with --lanes requests at once over two instances, in one workspace against a
 * workspace per lane. With --pg-rtt-ms N (even, at least 2), the stores reach PostgreSQL through a
 * TCP proxy that adds a round trip of N ms (bench/lib/delay-proxy.ts), as a database on another
 * host would: a reserve's cost is then its round trips.
 *
 *   npx tsx bench/experiments/reservations.ts [--rounds 5] [--pairs 2000] [--open 0,100,1000,5000,20000]
 *                                 [--postgres postgres://postgres@127.0.0.1:5432/test]
 *                                 [--pg-pairs 300] [--lanes 16] [--pg-seconds 2] [--pg-rtt-ms 2]
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KeyPolicy, WorkspacePolicy } from "../../src/domain/policy/policy.js";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { MemoryReservationStore } from "../../src/gateway/reservations/memory-store.js";
import { PostgresReservationStore } from "../../src/gateway/reservations/postgres-store.js";
import type { ReservationStore } from "../../src/gateway/reservations/reservation-store.js";
import type { HoldRequest } from "../../src/gateway/reservations/room.js";
import { systemClock } from "../../src/lib/clock.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { openPostgresStore } from "../../src/stores/postgres/open-postgres.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";
import {
  fixedPlan,
  holdRequest,
  keyPolicy,
  monthlyBudget,
  workspacePolicy,
} from "../../test/helpers/policies.js";
import { numberOption, stringOption } from "../lib/args.js";
import { freshPostgresDatabase } from "../lib/fresh-postgres.js";
import { median } from "../lib/stats.js";

const args = process.argv.slice(2);
const opt = numberOption(args);
const ROUNDS = opt("rounds", 5);
const PAIRS = opt("pairs", 2000);
const OPEN = (stringOption(args)("open") ?? "0,100,1000,5000,20000").split(",").map(Number);
const PG_URL = stringOption(args)("postgres");
const LANES = opt("lanes", 16);
const PG_SECONDS = opt("pg-seconds", 2);
/** Round trip added between the stores and PostgreSQL, in ms (0: none). */
const PG_RTT_MS = opt("pg-rtt-ms", 0);
const RTT_NOTE = PG_RTT_MS > 0 ? ` (+${PG_RTT_MS} ms round trip)` : "";
/** Each PostgreSQL pair is two commits: milliseconds, not microseconds. */
const PG_PAIRS = opt("pg-pairs", 300);
const KEYS = 50;
const TTL_MS = 10 * 60_000;

const LIMIT = 10n ** 18n;
/** The bench's workspace: one monthly budget that never refuses. */
const benchWorkspace = (id: string, organizationId: string): WorkspacePolicy =>
  workspacePolicy({ id, organizationId }, { budgets: [monthlyBudget(LIMIT)] });
/** Key n of `ws`, with a limit that never refuses. */
const benchKey = (n: number, ws: WorkspacePolicy): KeyPolicy =>
  keyPolicy(ws, `bench-key-${n}`, { id: n, limitNano: LIMIT });

const HOLD_NANO = 1_000n;
const plan = fixedPlan(HOLD_NANO);
const noCharge = async (): Promise<void> => undefined;

interface Side {
  rs: ReservationStore;
  ws: WorkspacePolicy;
  keys: KeyPolicy[];
  /** Background holds open now. */
  open: string[];
}

// As the gateway does: the hold's amount as expected (it is what plan() decides).
const request = (side: Side, id: string, key: KeyPolicy): HoldRequest =>
  holdRequest(side.ws, key, id, { expectedNano: HOLD_NANO });

async function setOpen(side: Side, n: number): Promise<void> {
  while (side.open.length > n) await side.rs.release(side.open.pop() as string);
  while (side.open.length < n) {
    const id = `bg-${side.open.length}-${randomBytes(4).toString("hex")}`;
    await side.rs.reserve(request(side, id, side.keys[side.open.length % KEYS] as KeyPolicy), plan);
    side.open.push(id);
  }
}

let seq = 0;
/** µs per reserve + settle, over `pairs` of them. */
async function time(side: Side, pairs: number): Promise<number> {
  const key = side.keys[0] as KeyPolicy;
  const t0 = performance.now();
  for (let i = 0; i < pairs; i++) {
    const id = `t-${++seq}`;
    await side.rs.reserve(request(side, id, key), plan);
    await side.rs.settle(id, noCharge, 0n);
  }
  return ((performance.now() - t0) * 1000) / pairs;
}

async function measure(
  label: string,
  empty: Side,
  loaded: Side,
  maxOpen: number,
  pairs: number,
): Promise<void> {
  // JIT and caches settled before anything is recorded.
  for (let r = 0; r < 3; r++) await Promise.all([time(empty, pairs), time(loaded, pairs)]);
  console.log(`\n${label}: µs per reserve + settle (median of ${ROUNDS} rounds of ${pairs})\n`);
  console.log("| other holds open | empty | loaded | loaded / empty |");
  console.log("| ---------------- | ----- | ------ | -------------- |");
  for (const n of OPEN.filter((o) => o <= maxOpen)) {
    await setOpen(loaded, n);
    await time(empty, pairs); // warm-up
    await time(loaded, pairs);
    const e: number[] = [];
    const l: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      e.push(await time(empty, pairs));
      l.push(await time(loaded, pairs));
    }
    const me = median(e);
    const ml = median(l);
    console.log(`| ${n} | ${me.toFixed(1)} | ${ml.toFixed(1)} | ${((100 * ml) / me).toFixed(0)} % |`);
  }
  await setOpen(loaded, 0);
}

async function memorySides(dir: string): Promise<{ sides: [Side, Side]; stores: RecordStore[] }> {
  const stores: RecordStore[] = [];
  const sides = [] as unknown as [Side, Side];
  for (const name of ["empty", "loaded"]) {
    const store = await openSqliteStore(join(dir, `${name}.sqlite`));
    stores.push(store);
    const ws = benchWorkspace("ws", "org");
    sides.push({
      rs: new MemoryReservationStore(store, TTL_MS),
      ws,
      keys: Array.from({ length: KEYS }, (_, n) => benchKey(n, ws)),
      open: [],
    });
  }
  return { sides, stores };
}

async function postgresSides(url: string): Promise<{ sides: [Side, Side]; close: () => Promise<void> }> {
  const db = await freshPostgresDatabase(url, PG_RTT_MS);
  const store = await openPostgresStore(db.url, 5);
  const sides = [] as unknown as [Side, Side];
  for (const label of ["empty", "loaded"]) {
    const org = await createOrganization(store, systemClock, `bench ${label}`);
    const ws = benchWorkspace(org.workspaceId, org.organizationId);
    sides.push({
      rs: new PostgresReservationStore(store, TTL_MS),
      ws,
      keys: Array.from({ length: KEYS }, (_, n) => benchKey(n, ws)),
      open: [],
    });
  }
  return {
    sides,
    close: async () => {
      await store.close();
      await db.drop();
    },
  };
}

/**
 * Requests per second that reserve and settle, LANES at once over two instances (two stores, two
 * connection pools, one database), all in one workspace against each lane in a workspace of its
 * own (the baseline: no lock shared). A reserve holds its workspace's row lock until it commits,
 * so one workspace takes its reserves one at a time across all instances.
 */
async function concurrentPostgres(url: string): Promise<void> {
  const db = await freshPostgresDatabase(url, PG_RTT_MS);
  const stores = [await openPostgresStore(db.url, 8), await openPostgresStore(db.url, 8)];
  try {
    const instances = stores.map((st) => new PostgresReservationStore(st, TTL_MS));
    const workspaces: WorkspacePolicy[] = [];
    for (let i = 0; i < LANES; i++) {
      const org = await createOrganization(stores[0] as RecordStore, systemClock, `bench lane ${i}`);
      workspaces.push(benchWorkspace(org.workspaceId, org.organizationId));
    }
    const run = async (shared: boolean): Promise<number> => {
      let done = 0;
      const until = performance.now() + PG_SECONDS * 1000;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: LANES }, async (_, lane) => {
          const ws = (shared ? workspaces[0] : workspaces[lane]) as WorkspacePolicy;
          const side: Side = {
            rs: instances[lane % 2] as ReservationStore,
            ws,
            keys: [benchKey(lane, ws)],
            open: [],
          };
          while (performance.now() < until) {
            const id = `c-${++seq}`;
            await side.rs.reserve(request(side, id, side.keys[0] as KeyPolicy), plan);
            await side.rs.settle(id, noCharge, 0n);
            done++;
          }
        }),
      );
      return (done * 1000) / (performance.now() - started);
    };
    await run(true); // warm-up
    const one: number[] = [];
    const own: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      one.push(await run(true));
      own.push(await run(false));
    }
    const m1 = median(one);
    const mo = median(own);
    console.log(
      `\nPostgreSQL${RTT_NOTE}, ${LANES} lanes over two instances, reserve + settle per second (median of ${ROUNDS} rounds of ${PG_SECONDS} s)\n`,
    );
    console.log("| one workspace | a workspace per lane | one / own |");
    console.log("| ------------- | -------------------- | --------- |");
    console.log(`| ${m1.toFixed(0)} | ${mo.toFixed(0)} | ${((100 * m1) / mo).toFixed(0)} % |`);
  } finally {
    for (const st of stores) await st.close();
    await db.drop();
  }
}

const dir = mkdtempSync(join(tmpdir(), "gatehouse-bench-reservations-"));
try {
  const memory = await memorySides(dir);
  await measure("In-process store (SQLite in a file)", ...memory.sides, Infinity, PAIRS);
  for (const s of memory.stores) await s.close();
  if (PG_URL) {
    const pgSides = await postgresSides(PG_URL);
    try {
      // Every background hold is a row: 20,000 take a while to insert one by one, and say no more.
      await measure(`PostgreSQL store${RTT_NOTE}`, ...pgSides.sides, 5_000, PG_PAIRS);
    } finally {
      await pgSides.close();
    }
    await concurrentPostgres(PG_URL);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
