import * as errors from "@openrouter/sdk/models/errors";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { startListening, type ListeningApp } from "../helpers/server.js";
import { OPERATIONS, OPERATION_NAMES, expectSdkError, isMapped, rejection } from "./helpers/sdk-errors.js";

const LIMIT = { max: 2, windowMs: 60_000 };

/**
 * 429 for every operation: a server whose limits allow two requests per key and operation. The
 * third call is refused whatever the first two answered (the limiter runs before validation and
 * before the handler), so the probe calls of OPERATIONS (which name nothing) are enough.
 */
describe("SDK 1.3.19 error classes: 429 from the rate limiter", () => {
  let s: ListeningApp;
  beforeAll(async () => {
    s = await startListening({
      config: {
        rateLimit: { management: LIMIT, keyUpdate: LIMIT, analytics: LIMIT, ingest: LIMIT, inference: LIMIT },
      },
    });
  });
  afterAll(() => s.close());

  it.each(OPERATION_NAMES)(
    "%s → 429 on the third call (OpenRouterDefaultError where the SDK maps no 429)",
    async (op) => {
      const sdk = s.sdk();
      for (let i = 0; i < LIMIT.max; i++) {
        const first = await OPERATIONS[op]!.call(sdk).catch((e: unknown) => e);
        expect((first as { statusCode?: number }).statusCode, `call ${i + 1}`).not.toBe(429);
      }
      const e = await expectSdkError(OPERATIONS[op]!.call(sdk), 429, isMapped(op, 429));
      expect(JSON.parse(e.body)).toMatchObject({
        error: { message: expect.stringMatching(/^Rate limit exceeded/) as unknown },
      });
      // The SDK does not retry a 429 by default; the caller sees it at once with the retry hint.
      expect(e.headers.get("retry-after")).toMatch(/^\d+$/);
    },
  );

  it("counters are per key: another management key is not limited by the first one's calls", async () => {
    const other = await createOrganization(s.ctx.store, s.clock, "Other");
    await expect(s.sdk(other.managementKey).apiKeys.list()).resolves.toMatchObject({ data: [] });
  });
});

/**
 * 500 for every operation: the record store is closed under a running server. The error handler
 * answers the envelope with code 500, a fixed message and `metadata.request_id`, and nothing of the
 * underlying failure. Retries are off in the test SDK (§E: a 5xx is otherwise retried for an hour).
 */
describe("SDK 1.3.19 error classes: 500 when the record store fails", () => {
  let s: ListeningApp;
  let store: RecordStore;
  beforeAll(async () => {
    store = await openSqliteStore(":memory:");
    s = await startListening({ store });
    await store.close();
  });
  afterAll(() => s.close());

  it.each(OPERATION_NAMES)("%s → 500 InternalServerResponseError with the envelope", async (op) => {
    const e = await expectSdkError(OPERATIONS[op]!.call(s.sdk()), 500, isMapped(op, 500));
    expect(e).toBeInstanceOf(errors.InternalServerResponseError);
    const err = (e as errors.InternalServerResponseError).error;
    expect(err).toEqual({
      code: 500,
      message: "Internal Server Error",
      metadata: { request_id: expect.stringMatching(/\S/) as unknown },
    });
    expect(JSON.parse(e.body)).toEqual({ error: err });
    expect(e.body).not.toMatch(/sqlite|database|kysely|driver|stack|\.ts\b|\.js\b|node_modules/i);
    expect(e.contentType).toMatch(/^application\/json/);
  });

  it("a bogus key also gets 500, not 401: the store that would tell is down", async () => {
    const e = await rejection(s.sdk("sk-gh-v1-nope").apiKeys.list());
    expect(e).toBeInstanceOf(errors.InternalServerResponseError);
  });

  it("each 500 carries its own request id", async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const e = (await rejection(
        s.sdk().workspaces.get({ id: "default" }),
      )) as errors.InternalServerResponseError;
      ids.add(String(e.error.metadata?.request_id));
    }
    expect(ids.size).toBe(3);
  });
});
