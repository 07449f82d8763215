import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createOrganization } from "../../src/domain/organizations/create-organization.js";
import { PolicyCache } from "../../src/domain/policy/policy-cache.js";
import { recordStoreLoader } from "../../src/domain/policy/policy-loader.js";
import type { KeyPolicy } from "../../src/domain/policy/policy.js";
import { DomainError } from "../../src/domain/errors.js";
import {
  authenticateInference,
  authenticateInferenceNow,
  type GatewayPolicy,
} from "../../src/gateway/inference-auth.js";
import { hashKey } from "../../src/lib/ids.js";
import { systemClock } from "../../src/lib/clock.js";
import type { RecordStore } from "../../src/stores/record-store.js";
import { openSqliteStore } from "../../src/stores/sqlite/open-sqlite.js";

/**
 * authenticateInferenceNow answers synchronously for a key the policy already knows, with the
 * same key or the same refusal as authenticateInference; otherwise it returns the lookup's promise.
 */
describe("inference authentication, synchronous when the key is known", () => {
  let store: RecordStore;
  let cache: PolicyCache;
  let managementKey: string;
  beforeEach(async () => {
    store = await openSqliteStore(":memory:");
    managementKey = (await createOrganization(store, systemClock, "Auth org")).managementKey;
    cache = new PolicyCache(recordStoreLoader(store.db), { channel: null });
  });
  afterEach(async () => store.close());

  /** What a call answers: the key's id or the refusal's status and message, and whether it waited. */
  async function outcome(f: () => KeyPolicy | Promise<KeyPolicy>): Promise<string> {
    let waited = false;
    try {
      const r = f();
      waited = r instanceof Promise;
      const key = await r;
      return `${waited ? "async" : "sync"} ${key.id}`;
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      return `${waited ? "async" : "sync"} ${err.status} ${err.message}`;
    }
  }

  it("answers a known key at once, with authenticateInference's refusals", async () => {
    const bearer = `Bearer ${managementKey}`;
    // Unknown to the cache: a lookup (and the same refusal as the async path: management key).
    const first = await outcome(() => authenticateInferenceNow(cache, systemClock, bearer));
    expect(first).toMatch(/^async 403 Management keys cannot make inference requests/);
    const known = await outcome(() => authenticateInferenceNow(cache, systemClock, bearer));
    expect(known).toBe(first.replace(/^async/, "sync"));
    expect(await outcome(() => authenticateInference(cache, systemClock, bearer))).toBe(first);
    // Header problems are refused before any lookup, synchronously.
    expect(await outcome(() => authenticateInferenceNow(cache, systemClock, "Basic x"))).toBe(
      "sync 401 Authorization header must be 'Bearer <key>'",
    );
    expect(await outcome(() => authenticateInferenceNow(cache, systemClock, undefined, " "))).toBe(
      "sync 401 Missing Authentication header",
    );
    const unknown = `Bearer sk-gh-v1-${"0".repeat(64)}`;
    expect(await outcome(() => authenticateInferenceNow(cache, systemClock, unknown))).toBe(
      "async 401 Invalid or expired API key",
    );
    expect(await outcome(() => authenticateInferenceNow(cache, systemClock, unknown))).toBe(
      "sync 401 Invalid or expired API key",
    );
  });

  it("tells a known ordinary key apart: usable, disabled, expired, deleted", async () => {
    const base = (await cache.keyByHash(hashKey(managementKey)))!;
    const secret = `sk-gh-v1-${"ab".repeat(32)}`;
    const cases: [Partial<KeyPolicy>, string][] = [
      [{}, `sync ${base.id}`],
      [{ disabled: true }, "sync 403 API key is disabled"],
      [{ expiresAt: "2000-01-01T00:00:00.000Z" }, "sync 401 Invalid or expired API key"],
      [{ expiresAt: "2000-01-01T00:00:00.000Z", disabled: true }, "sync 401 Invalid or expired API key"],
      [{ deleted: true }, "sync 401 Invalid or expired API key"],
    ];
    for (const [change, expected] of cases) {
      const key: KeyPolicy = { ...base, isManagement: false, ...change };
      const policy: GatewayPolicy = {
        keyByHash: async () => key,
        knownKey: (h) => (h === hashKey(secret) ? key : undefined),
        workspace: async () => null,
        guardrails: cache.guardrails.bind(cache),
      };
      expect(await outcome(() => authenticateInferenceNow(policy, systemClock, `Bearer ${secret}`))).toBe(
        expected,
      );
      // x-api-key is read the same way; the async path agrees.
      expect(await outcome(() => authenticateInferenceNow(policy, systemClock, undefined, secret))).toBe(
        expected,
      );
      expect(await outcome(() => authenticateInference(policy, systemClock, `Bearer ${secret}`))).toBe(
        expected.replace(/^sync/, "async"),
      );
    }
  });
});
