import { DomainError } from "../errors.js";
import type { KeyPolicy, Policy, WorkspacePolicy } from "./policy.js";
import type { OrgGuardrails } from "../guardrails/guardrail-policy.js";
import type { PolicyChannel } from "../../stores/policy-channel.js";

/** Reads one key or workspace from the record store (policy-loader.ts). */
export interface PolicyLoader {
  key(hash: string): Promise<KeyPolicy | null>;
  workspace(id: string): Promise<WorkspacePolicy | null>;
  workspaceIdByRef(organizationId: string, ref: string): Promise<string | null>;
  guardrails(organizationId: string): Promise<OrgGuardrails>;
}

export interface PolicyCacheOptions {
  /**
   * Change notifications from other instances (PostgreSQL), or from other processes writing to the
   * same SQLite file (the CLI); null = nothing else writes (SQLite in memory, tests).
   */
  channel: PolicyChannel | null;
  /** How long a found key or workspace is trusted without a notification (a safety net). */
  positiveTtlMs?: number;
  /**
   * How long "no such key" is remembered. Short, so that a key created by a process that sends no
   * notification (a CLI command on SQLite) works within this bound; notifications end it sooner.
   */
  negativeTtlMs?: number;
  /** Entries kept per kind; the oldest go first. */
  maxEntries?: number;
  /** Record-store lookups of uncached entries running at once; more wait in line. */
  maxConcurrentLoads?: number;
  /** Lookups allowed to wait in line; past this a lookup is refused with 429 (an unknown-key flood). */
  maxQueuedLoads?: number;
  /** Monotonic milliseconds (tests pass their own). */
  now?: () => number;
}

interface Entry<T> {
  value: T;
  expires: number;
}

const DEFAULTS = {
  positiveTtlMs: 60_000,
  negativeTtlMs: 1_000,
  maxEntries: 100_000,
  maxConcurrentLoads: 16,
  maxQueuedLoads: 2_000,
};

/** Too many lookups of uncached keys at once: refused without touching the record store. */
export const LOOKUP_QUEUE_FULL = "Too many requests with keys not yet known to this instance; retry shortly";

/**
 * A per-instance cache of key and workspace policy (docs/architecture.md "Policy cache").
 *
 * Correctness rules:
 * - A change made here is seen here at once: the writer calls keyChanged/workspaceChanged after
 *   committing. Changes made elsewhere arrive through the channel.
 * - A lookup that started before an invalidation may have read the old row: its answer is returned
 *   to the callers that joined it before the invalidation, but not cached (a global epoch is
 *   compared before storing); a lookup made after the invalidation starts its own read.
 * - While the channel is down (not yet connected, or reconnecting after a loss) nothing is cached:
 *   every lookup reads the store. When it comes back the cache starts empty, since notifications
 *   sent during the gap were lost.
 * - Unknown hashes are remembered for negativeTtlMs. Lookups of uncached entries are limited to
 *   maxConcurrentLoads at a time with at most maxQueuedLoads waiting, so a flood of random keys
 *   costs the store a bounded number of concurrent queries and never delays known keys.
 */
export class PolicyCache implements Policy {
  private readonly keys = new Map<string, Entry<KeyPolicy | null>>();
  private readonly workspaces = new Map<string, Entry<WorkspacePolicy | null>>();
  /** Organization id → its guardrails and assignments. */
  private readonly orgGuardrails = new Map<string, Entry<OrgGuardrails | null>>();
  /** `${organizationId}\0${ref}` → workspace id (or null). */
  private readonly refs = new Map<string, Entry<string | null>>();
  /** Lookups in flight, with the epoch they started in: a later epoch does not join them. */
  private readonly loading = new Map<string, { p: Promise<unknown>; epoch: number }>();
  private readonly o: Required<Omit<PolicyCacheOptions, "channel">>;
  private epoch = 0;
  private live: boolean;
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly loader: PolicyLoader,
    private readonly opts: PolicyCacheOptions,
  ) {
    this.o = { ...DEFAULTS, now: () => performance.now(), ...stripUndefined(opts) };
    this.live = opts.channel === null;
    opts.channel?.subscribe({
      change: (c) =>
        c.kind === "key"
          ? this.keyChanged(c.id)
          : c.kind === "workspace"
            ? this.workspaceChanged(c.id)
            : this.guardrailsChanged(c.id),
      up: () => {
        this.clear();
        this.live = true;
      },
      down: () => {
        this.live = false;
        this.clear();
      },
      unknownChange: () => this.clear(),
    });
  }

  /** Whether answers are being cached (the change channel is up, or there is none to wait for). */
  get caching(): boolean {
    return this.live;
  }

  keyByHash(hash: string): Promise<KeyPolicy | null> {
    return this.get(this.keys, `k\0${hash}`, hash, (h) => this.loader.key(h));
  }

  knownKey(hash: string): KeyPolicy | null | undefined {
    const hit = this.keys.get(hash);
    return hit && hit.expires > this.o.now() ? hit.value : undefined;
  }

  workspace(workspaceId: string): Promise<WorkspacePolicy | null> {
    return this.get(this.workspaces, `w\0${workspaceId}`, workspaceId, (id) => this.loader.workspace(id));
  }

  async guardrails(organizationId: string): Promise<OrgGuardrails> {
    const g = await this.get(this.orgGuardrails, `g\0${organizationId}`, organizationId, (id) =>
      this.loader.guardrails(id),
    );
    return g as OrgGuardrails;
  }

  async workspaceByRef(organizationId: string, ref: string): Promise<WorkspacePolicy | null> {
    const id = await this.get(this.refs, `r\0${organizationId}\0${ref}`, `${organizationId}\0${ref}`, () =>
      this.loader.workspaceIdByRef(organizationId, ref),
    );
    if (id === null) return null;
    const ws = await this.workspace(id);
    // A stale reference (renamed or deleted since) is looked up again rather than trusted.
    if (!ws || ws.deleted || ws.organizationId !== organizationId) {
      this.refs.delete(`${organizationId}\0${ref}`);
      const again = await this.loader.workspaceIdByRef(organizationId, ref);
      return again === null ? null : this.loader.workspace(again);
    }
    return ws;
  }

  keyChanged(hash: string): void {
    this.epoch++;
    this.keys.delete(hash);
  }

  workspaceChanged(workspaceId: string): void {
    this.epoch++;
    this.workspaces.delete(workspaceId);
    // A slug may have moved or a workspace been created or deleted: references are re-resolved.
    this.refs.clear();
  }

  guardrailsChanged(organizationId: string): void {
    this.epoch++;
    this.orgGuardrails.delete(organizationId);
  }

  clear(): void {
    this.epoch++;
    this.orgGuardrails.clear();
    this.keys.clear();
    this.workspaces.clear();
    this.refs.clear();
  }

  async close(): Promise<void> {
    await this.opts.channel?.close();
  }

  private async get<T>(
    map: Map<string, Entry<T | null>>,
    loadKey: string,
    id: string,
    load: (id: string) => Promise<T | null>,
  ): Promise<T | null> {
    const hit = map.get(id);
    if (hit) {
      if (hit.expires > this.o.now()) return hit.value;
      map.delete(id);
    }
    // A lookup that started before an invalidation may have read the old row: joined only by
    // callers of the same epoch, so the next request after a change reads it afresh.
    const pending = this.loading.get(loadKey);
    if (pending && pending.epoch === this.epoch) return pending.p as Promise<T | null>;
    const epoch = this.epoch;
    const done = (): void => {
      if (this.loading.get(loadKey) === entry) this.loading.delete(loadKey);
    };
    const p = this.limited(() => load(id)).then(
      (value) => {
        done();
        if (this.live && epoch === this.epoch) this.store(map, id, value);
        return value;
      },
      (err: unknown) => {
        done();
        throw err;
      },
    );
    const entry = { p, epoch };
    this.loading.set(loadKey, entry);
    return p;
  }

  private store<T>(map: Map<string, Entry<T | null>>, id: string, value: T | null): void {
    const ttl = value === null ? this.o.negativeTtlMs : this.o.positiveTtlMs;
    if (ttl <= 0) return;
    if (map.size >= this.o.maxEntries) {
      const oldest = map.keys().next();
      if (!oldest.done) map.delete(oldest.value);
    }
    map.set(id, { value, expires: this.o.now() + ttl });
  }

  private async limited<T>(fn: () => Promise<T>): Promise<T> {
    if (this.running >= this.o.maxConcurrentLoads) {
      if (this.waiting.length >= this.o.maxQueuedLoads) {
        throw new DomainError("rate_limited", LOOKUP_QUEUE_FULL);
      }
      // The finishing lookup hands its slot over: `running` stays counted.
      await new Promise<void>((go) => this.waiting.push(go));
    } else this.running++;
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(o).filter(([k, v]) => v !== undefined && k !== "channel"),
  ) as Partial<T>;
}
