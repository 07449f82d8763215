import { afterAll, beforeAll } from "vitest";
import { STORE_FACTORIES, type StoreFactory } from "../helpers/stores.js";
import { makeFuzzWorld, type FuzzWorld } from "./helpers.js";

/**
 * The setup every API fuzz file repeats: which stores it runs on, how many inputs each property
 * gets there, and the seeded app (a FuzzWorld) its describe block shares.
 */

/**
 * GATEHOUSE_FUZZ_SCALE multiplies every run count (default 1): a long local hunt runs the same
 * properties with, say, 20 times the inputs. fast-check prints the seed of any failure.
 */
const SCALE = Math.max(1, Number(process.env.GATEHOUSE_FUZZ_SCALE ?? 1) || 1);

/** Runs per store: SQLite always, PostgreSQL when configured (with fewer runs). */
export const FUZZ_STORES = STORE_FACTORIES.map((f) => ({
  factory: f,
  /** Scales a SQLite run count down for PostgreSQL, whose round trips cost more. */
  runs: (sqliteRuns: number) =>
    Math.round(SCALE * (f.name === "sqlite" ? sqliteRuns : Math.max(10, Math.round(sqliteRuns / 6)))),
}));

/**
 * In a describe block: a fuzz world on the factory's store, made before the block's tests and
 * closed after them. The returned object is filled in by then (read it inside tests and hooks,
 * not at the block's top level).
 */
export function useFuzzWorld(factory: StoreFactory): FuzzWorld {
  const w = {} as FuzzWorld;
  beforeAll(async () => {
    Object.assign(w, await makeFuzzWorld(factory));
  });
  afterAll(() => w.close());
  return w;
}
