import type { CompiledQuery, QueryResult } from "kysely";
import type { Db } from "./record-store.js";

/** Stand-in values the builder sees on the first call; each must come out as one bound parameter. */
const SLOT = "\u0000gatehouse-slot-";

interface Compiled {
  query: CompiledQuery;
  /** For each bound parameter: the argument it takes (>= 0) or -1 (a constant of the query). */
  from: number[];
}

/**
 * A hot-path query built and compiled once per engine, then run with new values: Kysely's
 * builder and compiler cost about as much CPU as SQLite's own work for the small statements a
 * request runs. `build` receives the shape and stand-ins for the arguments, and must pass each
 * argument it uses to Kysely as a value unchanged (no arithmetic on it, no branching on it: only
 * `shape` may change the statement; one compiled statement per shape). The first call of a shape
 * throws if an argument was written into the SQL text or changed before it was bound. The SQL is exactly what the builder
 * produces, so SQLite and PostgreSQL run the same statements as before.
 */
export class QueryTemplate<A extends readonly unknown[], R> {
  /** Keyed by the dialect's adapter, which a Kysely instance shares with its transactions. */
  private readonly compiled = new WeakMap<object, Map<string, Compiled>>();

  constructor(private readonly build: (db: Db, shape: string, ...args: A) => CompiledQuery<R>) {}

  async execute(db: Db, shape: string, ...args: A): Promise<QueryResult<R>> {
    return db.executeQuery<R>(this.bind(db, shape, ...args));
  }

  /** The compiled statement of this shape with these values, to run elsewhere (readCommitted). */
  bind(db: Db, shape: string, ...args: A): CompiledQuery<R> {
    const adapter = db.getExecutor().adapter;
    let byShape = this.compiled.get(adapter);
    if (byShape === undefined) {
      byShape = new Map();
      this.compiled.set(adapter, byShape);
    }
    let c = byShape.get(shape);
    if (c === undefined) {
      c = this.compile(db, shape, args.length);
      byShape.set(shape, c);
    }
    const { query, from } = c;
    const parameters = from.map((i, at) => (i >= 0 ? args[i] : query.parameters[at]));
    return { ...query, parameters };
  }

  private compile(db: Db, shape: string, arity: number): Compiled {
    const slots = Array.from({ length: arity }, (_, i) => `${SLOT}${i}`);
    const query = this.build(db, shape, ...(slots as unknown as A));
    if (query.sql.includes(SLOT)) throw new Error("QueryTemplate: an argument was written into the SQL text");
    const from = query.parameters.map((p) => {
      if (typeof p !== "string" || !p.includes(SLOT)) return -1;
      const i = slots.indexOf(p);
      if (i < 0) throw new Error("QueryTemplate: an argument was changed before it was bound");
      return i;
    });
    return { query, from };
  }
}
