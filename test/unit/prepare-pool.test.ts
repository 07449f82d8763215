import fc from "fast-check";
import type { Worker } from "node:worker_threads";
import { afterAll, describe, expect, it } from "vitest";
import {
  inlinePreparer,
  type PreparedBatch,
  type Resolve,
} from "../../src/domain/ingest/pipeline/preparer-port.js";
import { DomainError } from "../../src/domain/errors.js";
import type { KeyRef } from "../../src/domain/ingest/records/normalise-batch.js";
import type { IngestInput } from "../../src/domain/ingest/records/read-body.js";
import { startPreparePool } from "../../src/domain/ingest/workers/prepare-pool.js";

/*
 * The worker pool against inline preparation: the same input gives the same answer (the prepared
 * rows, ledger counters, labels and encoded columns, or the same error), so nothing is lost or
 * changed crossing the thread boundary (bigints, maps, texts); a worker that dies fails only the
 * batches it held, and the pool goes on with a new one.
 */

const NOW = Date.UTC(2026, 10, 18, 12);
const ORG = "org_1";
const HASH_A = "a".repeat(64);
const HASH_B = "b".repeat(64);
const KEYS = new Map<string, KeyRef>([
  [HASH_A, { id: 1, workspaceId: "ws_a", creatorUserId: "user_a" }],
  [HASH_B, { id: 2, workspaceId: "ws_b", creatorUserId: null }],
]);
const WS_X = "00000000-0000-4000-8000-00000000000a";
const WS_UNKNOWN = "00000000-0000-4000-8000-00000000000b";
const resolve: Resolve = async (refs) => ({
  keys: new Map([...KEYS].filter(([h]) => refs.hashes.includes(h))),
  workspaces: new Set(refs.workspaceIds.filter((w) => w === WS_X)),
  legacyWorkspace: refs.legacy ? "ws_default" : null,
});

/** A prepared batch as plain data, or the error as what the HTTP answer is made of. */
async function outcome(p: Promise<PreparedBatch>, subsetIds?: string[]): Promise<Record<string, unknown>> {
  try {
    const b = await p;
    try {
      const { subset: _s, release: _r, ...rows } = b;
      const sub = subsetIds ? await b.subset(new Set(subsetIds)) : null;
      return { ok: rows, sub };
    } finally {
      b.release();
    }
  } catch (err) {
    if (err instanceof DomainError) return { error: [err.code, err.message, err.metadata] };
    throw err;
  }
}

const wrongValue = fc.constantFrom<unknown>(
  null,
  -1,
  1e300,
  "",
  "x".repeat(300),
  "\u0001",
  "line\u0002break",
  true,
  [],
  {},
  "2026-11-18T11:00",
  "9999-01-01T00:00:00Z",
);
const field = fc.constantFrom(
  "id",
  "created_at",
  "api_key_hash",
  "model",
  "provider",
  "usage",
  "tokens_prompt",
  "workspace_id",
  "user_id",
  "app_id",
  "latency_ms",
  "classifications",
);

const record = fc
  .record({
    n: fc.integer({ min: 0, max: 40 }), // small id space: repeated ids inside a batch
    key: fc.oneof(
      { weight: 150, arbitrary: fc.constantFrom(HASH_A, HASH_B) },
      { weight: 1, arbitrary: fc.constant("c".repeat(64)) },
    ),
    usage: fc.integer({ min: 0, max: 10 ** 9 }),
    minutes: fc.integer({ min: 0, max: 60 * 24 * 40 }),
    byok: fc.boolean(),
    app: fc.option(fc.integer({ min: 1, max: 5 })),
    title: fc.option(fc.constantFrom("App one", "Ünïcödé ✓", "tab\\there")),
    user: fc.option(fc.constantFrom("u1", "u2")),
    email: fc.option(fc.constantFrom("a@example.com", "b@example.com")),
    workspace: fc.oneof(
      { weight: 150, arbitrary: fc.constantFrom(undefined, null, WS_X) },
      { weight: 1, arbitrary: fc.constant(WS_UNKNOWN) },
    ),
    tags: fc.boolean(),
    // One record in ~100 has a wrong field (so that most batches of 30 pass and some fail).
    broken: fc.oneof(
      { weight: 99, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.tuple(field, wrongValue) },
    ),
  })
  .map((r) => {
    const rec: Record<string, unknown> = {
      id: `gen-${r.n}`,
      created_at: new Date(NOW - r.minutes * 60_000).toISOString().replace(".000Z", "Z"),
      api_key_hash: r.key,
      model: "openai/gpt-4o",
      provider: "OpenAI",
      tokens_prompt: 1000,
      tokens_completion: 200,
      usage: r.usage / 1e9,
      is_byok: r.byok,
      latency_ms: 120.5,
    };
    if (r.byok) rec.byok_usage_inference = (r.usage * 3) / 1e9;
    if (r.app !== null) rec.app_id = r.app;
    if (r.title !== null) rec.app_title = r.title;
    if (r.user !== null) rec.user_id = r.user;
    if (r.email !== null) rec.user_email = r.email;
    if (r.workspace !== undefined) rec.workspace_id = r.workspace;
    if (r.tags) {
      rec.classifications = [
        { classifier_id: "11111111-1111-4111-8111-111111111111", dimension_name: "topic", value: "coding" },
      ];
    }
    if (r.broken) rec[r.broken[0]] = r.broken[1];
    return rec;
  });

/** A body as it arrives: JSON, NDJSON (with a broken line sometimes), or already parsed records. */
const input: fc.Arbitrary<IngestInput> = fc
  .tuple(
    fc.array(record, { minLength: 0, maxLength: 30 }),
    fc.constantFrom("json", "ndjson", "records"),
    fc.integer({ min: 0, max: 9 }).map((n) => n < 2),
    // As the route passes it (bytes: a view into Node's shared pool when small, a buffer of its
    // own when large, which moves to the worker without a copy), or as text.
    fc.constantFrom("text", "bytes", "own bytes"),
  )
  .map(([records, format, garble, as]) => {
    if (format === "records") return { format, records };
    let text: string;
    if (format === "ndjson") {
      const lines = records.map((r) => JSON.stringify(r));
      if (garble && lines.length > 0) lines[0] = `${lines[0]?.slice(0, 10)}`;
      text = lines.join("\n");
    } else {
      text = JSON.stringify({ generations: records });
      if (garble) text = text.slice(0, -1);
    }
    if (as === "text") return { format, text };
    return { format, text: as === "bytes" ? Buffer.from(text) : new Uint8Array(Buffer.from(text)) };
  });

/** A copy of the input for the other preparer (bytes moved to a worker are gone afterwards). */
const copyOf = (i: IngestInput): IngestInput =>
  i.format !== "records" && typeof i.text !== "string" ? { ...i, text: new Uint8Array(i.text) } : i;

describe("ingest worker pool", () => {
  const pool = startPreparePool(2);
  afterAll(() => pool.close());

  it("prepares every body exactly as inline preparation does (rows, counters, labels, encoding, errors)", async () => {
    let accepted = 0;
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(
        input,
        fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 10 }),
        async (inp, sub) => {
          const subset = sub.map((n) => `gen-${n}`);
          const inline = await outcome(inlinePreparer.prepare(copyOf(inp), ORG, NOW, resolve), subset);
          const pooled = await outcome(pool.prepare(inp, ORG, NOW, resolve), subset);
          expect(pooled).toEqual(inline);
          if ("ok" in inline) accepted += 1;
          else refused += 1;
        },
      ),
      { numRuns: 150 },
    );
    // Both outcomes were exercised, not only refusals.
    expect(accepted).toBeGreaterThan(20);
    expect(refused).toBeGreaterThan(20);
  });

  it("answers the envelope problems of a body like Fastify's JSON parser: empty, not JSON, prototype keys", async () => {
    const cases: [IngestInput, string][] = [
      [{ format: "json", text: "" }, "body: must be a JSON object (the body is empty)"],
      [{ format: "json", text: "{" }, "body: is not valid JSON"],
      [{ format: "json", text: '{"generations":[],"__proto__":{"x":1}}' }, "body: is not valid JSON"],
      [{ format: "json", text: '{"constructor":{"prototype":{"x":1}}}' }, "body: is not valid JSON"],
      [{ format: "json", text: "[]" }, "body: must be a JSON object"],
      [{ format: "json", text: '{"generations":[]}' }, "generations: at least 1 record"],
      [{ format: "ndjson", text: "\n \n" }, "generations: at least 1 record"],
      [{ format: "json", text: Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]) }, "generations: is required"],
      [{ format: "json", text: Buffer.from([0x7b, 0xff, 0x7d]) }, "body: is not valid JSON"],
    ];
    for (const [inp, message] of cases) {
      const res = await outcome(pool.prepare(inp, ORG, NOW, resolve));
      expect(res, message).toEqual({ error: ["invalid_request", message, null] });
    }
    const many = Array.from({ length: 10_001 }, () => "{}").join("\n");
    expect(await outcome(pool.prepare({ format: "ndjson", text: many }, ORG, NOW, resolve))).toEqual({
      error: ["payload_too_large", "generations: at most 10000 records per request", null],
    });
  });

  it("a worker that dies fails the batch it held with an error; the next batch gets a new worker", async () => {
    // The worker is stopped while it holds a batch (between its check and normalise steps). A
    // worker out of its heap (resourceLimits) dies the same way, but V8 may then take the whole
    // process down with it (an allocation in JSON.parse past the limit): not a thing a test can
    // do reliably.
    /** A body of one valid record with this id. */
    const oneRecord = (id: string): string =>
      JSON.stringify({
        generations: [
          {
            id,
            created_at: "2026-11-18T11:00:00Z",
            api_key_hash: HASH_A,
            model: "openai/gpt-4o",
            provider: "OpenAI",
            tokens_prompt: 1,
            tokens_completion: 1,
            usage: 0.5,
            latency_ms: 1,
          },
        ],
      });
    const workers: Worker[] = [];
    const small = startPreparePool(1, { onWorker: (w) => workers.push(w) });
    try {
      const stopping: Resolve = async (refs) => {
        await workers[0]?.terminate();
        return resolve(refs);
      };
      await expect(
        small.prepare({ format: "json", text: oneRecord("dies") }, ORG, NOW, stopping),
      ).rejects.toThrow(/ingest worker/);
      expect(workers).toHaveLength(1);
      const ok = await outcome(
        small.prepare({ format: "json", text: oneRecord("after") }, ORG, NOW, resolve),
      );
      expect((ok.ok as { ids: string[] }).ids).toEqual(["after"]);
      expect(workers).toHaveLength(2); // a new worker took it
    } finally {
      await small.close();
    }
  });

  it("refuses work once closed", async () => {
    const p = startPreparePool(1);
    await p.close();
    await expect(p.prepare({ format: "records", records: [] }, ORG, NOW, resolve)).rejects.toThrow(/closed/);
  });
});
