import { DomainError } from "../../domain/errors.js";
import { DEFAULT_UPSTREAM_CONNECTIONS } from "../providers/upstream-http.js";

/** Why a model request was refused before anything was reserved or forwarded. */
export type InFlightRefusal = "in_flight_per_key" | "in_flight_per_workspace_provider";

export interface InFlightLimitsOptions {
  /** A key's model requests in flight on this instance at most; 0 = no limit. */
  maxPerKey: number;
  /**
   * Percent of a provider's connections (its pool) that one workspace's requests in flight may
   * hold on this instance, 1 to 100 (100 = the whole pool: no share).
   */
  workspaceSharePct: number;
}

/**
 * A provider as its slots see it: its slug, and its connection pool's size (absent: the default
 * pool's; null: no pool, as the built-in mock).
 */
export interface PooledProvider {
  slug: string;
  connections?: number | null;
}

/** A refused request may come back once one of its requests ends: seconds, not minutes. */
const RETRY_AFTER_SECONDS = 1;

/** One provider's requests in flight, in all and by workspace. */
class ProviderLoad {
  total = 0;
  readonly workspaces = new Map<string, number>();
  /** The requests in flight one workspace may have here (Infinity: no share). */
  constructor(readonly cap: number) {}
}

/**
 * Fair use of the upstreams on this instance (docs/gateway.md "Fair use: requests in flight").
 * Each model request takes a slot for its key when it is admitted (`admit`), and one at the
 * provider of each attempt before that attempt is reserved or forwarded (RequestSlots.at); a full
 * key or a workspace's full share of a provider is refused 429 at once rather than queued behind
 * other tenants' requests in the provider's pool. Counts are plain numbers in maps: a lookup and
 * an increment per request, nothing awaited. Per instance, not shared between instances.
 */
export class InFlightLimits {
  private readonly keys = new Map<string, number>();
  private readonly providers = new Map<string, ProviderLoad>();
  /** Requests refused, by reason, since the start (the refusals counter reads it). */
  readonly refused: Record<InFlightRefusal, number> = {
    in_flight_per_key: 0,
    in_flight_per_workspace_provider: 0,
  };

  constructor(private readonly opts: InFlightLimitsOptions) {}

  /**
   * Takes a slot for the key, or throws the 429 when it already has `maxPerKey` requests in
   * flight. The slots must be released once, however the request ends (RequestSlots.release).
   */
  admit(keyHash: string, workspaceId: string): RequestSlots {
    const n = this.keys.get(keyHash) ?? 0;
    const max = this.opts.maxPerKey;
    if (max > 0 && n >= max) {
      this.refused.in_flight_per_key++;
      throw new DomainError(
        "rate_limited",
        `Too many requests in flight for this key: ${n} of at most ${max}. Retry once one of them has finished`,
        { limit: "in_flight_per_key", max, in_flight: n, retry_after_seconds: RETRY_AFTER_SECONDS },
      );
    }
    this.keys.set(keyHash, n + 1);
    return new RequestSlots(this, keyHash, workspaceId);
  }

  /**
   * The attempts whose provider has room for the workspace, in their order; all of them when none
   * has (the first is then refused when it is tried, naming the limit). A provider whose share the
   * workspace has used up is skipped like a rate-limited one, for the next model or provider.
   */
  withRoom<T extends { provider: PooledProvider }>(attempts: T[], workspaceId: string): T[] {
    if (this.opts.workspaceSharePct >= 100) return attempts;
    let full = 0;
    for (const a of attempts) if (!this.hasRoom(a.provider, workspaceId)) full++;
    if (full === 0 || full === attempts.length) return attempts;
    return attempts.filter((a) => this.hasRoom(a.provider, workspaceId));
  }

  /** Requests in flight by provider (every provider that has had one on this instance). */
  *byProvider(): IterableIterator<{ provider: string; inFlight: number }> {
    for (const [provider, load] of this.providers) yield { provider, inFlight: load.total };
  }

  /** A key's requests in flight on this instance. */
  ofKey(keyHash: string): number {
    return this.keys.get(keyHash) ?? 0;
  }

  /** A workspace's requests in flight at a provider on this instance. */
  ofWorkspace(provider: string, workspaceId: string): number {
    return this.providers.get(provider)?.workspaces.get(workspaceId) ?? 0;
  }

  /** @internal RequestSlots' steps. */
  enter(p: PooledProvider, workspaceId: string): void {
    const load = this.loadOf(p);
    const n = load.workspaces.get(workspaceId) ?? 0;
    if (n >= load.cap) {
      this.refused.in_flight_per_workspace_provider++;
      throw new DomainError(
        "rate_limited",
        `Too many requests in flight for this workspace at provider ${p.slug}: ${n} of at most ${load.cap} (its share of the provider's connections). Retry once one of them has finished`,
        {
          limit: "in_flight_per_workspace_provider",
          provider: p.slug,
          max: load.cap,
          in_flight: n,
          retry_after_seconds: RETRY_AFTER_SECONDS,
        },
      );
    }
    load.workspaces.set(workspaceId, n + 1);
    load.total++;
  }

  /** @internal */
  leave(provider: string, workspaceId: string): void {
    const load = this.providers.get(provider);
    if (!load) return;
    const n = load.workspaces.get(workspaceId) ?? 0;
    if (n <= 1) load.workspaces.delete(workspaceId);
    else load.workspaces.set(workspaceId, n - 1);
    load.total--;
  }

  /** @internal */
  leaveKey(keyHash: string): void {
    const n = this.keys.get(keyHash) ?? 0;
    if (n <= 1) this.keys.delete(keyHash);
    else this.keys.set(keyHash, n - 1);
  }

  private hasRoom(p: PooledProvider, workspaceId: string): boolean {
    const load = this.providers.get(p.slug);
    return !load || (load.workspaces.get(workspaceId) ?? 0) < load.cap;
  }

  private loadOf(p: PooledProvider): ProviderLoad {
    let load = this.providers.get(p.slug);
    if (!load) {
      load = new ProviderLoad(workspaceCap(p.connections, this.opts.workspaceSharePct));
      this.providers.set(p.slug, load);
    }
    return load;
  }
}

/**
 * A workspace's requests in flight at a provider at most: its share of the provider's
 * connections, rounded down, at least 1. Infinity for a provider without a pool (the built-in
 * mock) or a share of 100 %.
 */
export function workspaceCap(connections: number | null | undefined, sharePct: number): number {
  if (connections === null || sharePct >= 100) return Infinity;
  const pool = connections ?? DEFAULT_UPSTREAM_CONNECTIONS;
  return Math.max(1, Math.floor((pool * sharePct) / 100));
}

/**
 * One request's slots: its key's, taken at admission, and the provider's of the attempt being
 * tried (one at a time). `release` gives back both, once, whichever way the request ended; later
 * calls do nothing.
 */
export class RequestSlots {
  private provider: string | null = null;
  private released = false;

  constructor(
    private readonly limits: InFlightLimits,
    private readonly keyHash: string,
    readonly workspaceId: string,
  ) {}

  /**
   * Moves the request to provider `p` for its next attempt (the same provider: nothing to do), or
   * throws the 429 when the workspace's share of it is in use. The previous provider's slot is
   * given back first: its attempt has ended.
   */
  at(p: PooledProvider): void {
    if (this.released || this.provider === p.slug) return;
    if (this.provider !== null) this.limits.leave(this.provider, this.workspaceId);
    this.provider = null;
    this.limits.enter(p, this.workspaceId);
    this.provider = p.slug;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    if (this.provider !== null) this.limits.leave(this.provider, this.workspaceId);
    this.provider = null;
    this.limits.leaveKey(this.keyHash);
  }
}
