import { availableParallelism } from "node:os";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { KEY_RE } from "../lib/ids.js";
import { normalHostName, parseAllowedHost } from "../lib/outbound-policy.js";
import { Redacted } from "../lib/redacted.js";
import {
  ProvidersFileError,
  readProvidersFile,
  type ProvidersFileSpec,
} from "../gateway/catalog/providers-file.js";

/**
 * Configuration comes from the environment, is parsed once with every problem reported together,
 * and is frozen. Nothing outside this module reads process.env.
 */
export interface RateLimitConfig {
  /** Requests allowed per window and per management key. */
  max: number;
  windowMs: number;
}

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  databaseUrl: string | null;
  redisUrl: string | null;
  /** ClickHouse server for activity (analytics); null = embedded DuckDB file in dataDir. */
  clickhouseUrl: string | null;
  /**
   * Start even when another instance shares the record store and either keeps analytics in an
   * embedded DuckDB file: each instance's analytics then covers only what it ingested.
   */
  allowSplitAnalytics: boolean;
  /** Database of the activity tables on ClickHouse; null = the server's default. */
  clickhouseDatabase: string | null;
  /** Embedded DuckDB activity store: buffer-pool limit (DuckDB syntax, `2GB`) and worker threads; null = DuckDB's defaults (80% of RAM, one per core). */
  duckdb: { memoryLimit: string | null; threads: number | null };
  /**
   * Worker threads that parse and validate ingest bodies on the embedded DuckDB store; 0 = on the
   * main thread. Default: one per core, at most 4.
   */
  ingestWorkers: number;
  /**
   * Embedded DuckDB store: how long accepted ingest batches may wait to be written to it together
   * (one DuckDB transaction for all). Analytics reads never wait for it: a read writes what it
   * needs first. 0 = written as soon as accepted.
   */
  ingestFlushLingerMs: number;
  analytics: {
    /** An analytics query past this is cancelled and answered 408. */
    queryTimeoutMs: number;
    /** How long an analytics result is served from cache (new activity invalidates it sooner). */
    cacheTtlMs: number;
  };
  /** Embedded DuckDB activity store: background re-sorting of sealed rows (duckdb-compaction.ts). */
  activityCompaction: {
    /** Rows per compacted chunk, sorted by (organization, key, time); 0 = never compact. */
    chunkRows: number;
    /** Rows older than this are sealed (eligible). */
    sealMs: number;
    /** How often to look for a ready chunk. */
    intervalMs: number;
  };
  broadcast: BroadcastConfig;
  encryptionKey: Buffer | null;
  bootstrapKey: string | null;
  logLevel: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
  /**
   * Request limits per key and window, by class (docs/configuration.md "Rate limits"): management
   * API calls; key updates; analytics queries; ingest batches (sized for throughput: a gateway
   * posting batches of 1,000); inference (the gateway's model requests, per calling key).
   */
  rateLimit: {
    management: RateLimitConfig;
    keyUpdate: RateLimitConfig;
    analytics: RateLimitConfig;
    ingest: RateLimitConfig;
    inference: RateLimitConfig;
  };
  trustProxy: boolean;
  /**
   * Bearer token that GET /metrics (Prometheus) requires; null = no /metrics route
   * (docs/operations.md "Metrics"). Held as Redacted: never printed.
   */
  metricsToken: Redacted | null;
  /**
   * The gateway's upstreams and their models (GATEHOUSE_PROVIDERS_FILE), validated; null = no
   * file, only the built-in mock. API keys named by api_key_env are resolved from this same
   * environment, and held as Redacted.
   */
  providersFile: ProvidersFileSpec | null;
  gateway: GatewayConfig;
  /** The built dashboard (index.html and assets/) served at `/`; a missing directory serves none. */
  webDir: string;
  /**
   * How long the content IO logging keeps is served and stored (docs/content-logging.md), in
   * days; older content is swept.
   */
  contentRetentionDays: number;
}

/** Delivery to observability destinations (docs/broadcast.md "Retry schedule", "Caps"). */
export interface BroadcastConfig {
  /** Run delivery workers in this process (the outbox is written either way). */
  workers: boolean;
  /** How often an idle worker looks for due deliveries written by other instances. */
  pollMs: number;
  /** Time limit of one HTTP attempt. */
  attemptTimeoutMs: number;
  /** Full-jitter exponential backoff: delay in [0, min(retryMaxMs, retryBaseMs * 2^(n-1))]. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** A delivery is dead-lettered after this many attempts, or when older than maxAgeMs. */
  maxAttempts: number;
  maxAgeMs: number;
  /** Pending generations per destination past which the oldest are dead-lettered. */
  queueCap: number;
  /** Consecutive failed sends that open a destination's circuit, and how long it stays open. */
  breakerThreshold: number;
  breakerCooldownMs: number;
  /** How long delivered and dead rows are kept (status, recent dead letters) before pruning. */
  deliveredRetentionMs: number;
  deadRetentionMs: number;
  /**
   * Refuse destinations whose host is, or resolves to, an address that is not globally reachable
   * (loopback, private, link-local, shared, benchmark, documentation, reserved, multicast:
   * src/lib/special-addresses.ts) or a `localhost` name. On by default.
   */
  refusePrivateAddresses: boolean;
  /**
   * What the operator allows despite refusePrivateAddresses: CIDRs, single IPs (as they are
   * written) and host names (lower case, without a trailing dot) (src/lib/outbound-policy.ts).
   */
  allowedPrivateHosts: readonly string[];
  /** Destinations delivered to at once by one process. */
  concurrency: number;
  /**
   * How long a destination's pending deliveries may wait to gather into one request
   * (docs/broadcast.md "Linger"): a worker claims once the oldest has waited this long or a full
   * batch (the encoder's size) is pending. 0 sends each as soon as it is written.
   */
  lingerMs: number;
}

/** The data plane (docs/gateway.md). */
export interface GatewayConfig {
  /** The built-in mock provider (`mock/echo`); on by default so a fresh install can answer. */
  mockEnabled: boolean;
  /** Artificial delay of the mock provider before its first chunk, and between chunks. */
  mockLatencyMs: number;
  /** Deadline for an upstream's first byte; past it the attempt fails over (timeout). */
  upstreamTimeoutMs: number;
  /**
   * Lifetime of a reservation that is not renewed: an in-flight request renews its holds every
   * third of it; a crashed instance's holds count for nothing after it.
   */
  reservationTtlMs: number;
  /** Where holds live: one process (memory) or every instance sharing PostgreSQL (postgres). */
  reservations: "memory" | "postgres";
  /**
   * PostgreSQL holds: rows an instance deletes or rewrites in `gateway_reservations` after which
   * it vacuums the table (0: never, autovacuum alone).
   */
  reservationVacuumRows: number;
  /**
   * At shutdown, how long model requests in flight may take to finish before they are cancelled
   * (what they generated is charged and recorded either way).
   */
  shutdownGraceMs: number;
  /**
   * When an answer is sent relative to its generation record (docs/gateway.md "When the answer is sent"):
   * durable, after the record commits, or on a store this process owns (SQLite) after the record
   * is in the recording journal (src/gateway/recording/journal.ts; the commit follows, and the next start
   * records what a crash left there): a crash never loses an answered generation; deferred,
   * before (the record follows in the next group commit; the hold counts until then, reads on
   * this instance wait for it; a kill -9 loses the answers of the last few milliseconds).
   */
  recording: "durable" | "deferred";
  /**
   * With deferred or journaled recording, how long a generation's record may wait for others to
   * share its group commit, in ms (GenerationRecorder's gatherMs; reads on this instance never
   * wait for it).
   */
  recordingGatherMs: number;
  /**
   * With durable recording on a shared store (PostgreSQL: no journal), how long a record flush may
   * wait for the model requests still in flight on this instance to join it, in ms, and only while
   * some are (GenerationRecorder's commitDelayMs: PostgreSQL's commit_delay with commit_siblings);
   * 0 = never.
   */
  recordingCommitDelayMs: number;
  /**
   * With deferred or journaled recording, how many records may wait for their commit before an
   * answer waits for its own commit: the queue holds each generation's prompt and output, so a
   * stalled record store must not let it grow with the request rate.
   */
  recordingMaxQueued: number;
  /**
   * Most bytes (as stored JSON) of prompt and completion text one generation keeps for Broadcast
   * (BROADCAST_MAX_CONTEXT_BYTES; src/broadcast/context-cap.ts): past it both are cut, with a
   * marker. Images and other binary parts are never kept, only placeholders.
   */
  broadcastMaxContextBytes: number;
  /**
   * A key's model requests in flight on this instance at most; past it a request is refused 429
   * (`in_flight_per_key`) before anything is reserved or forwarded. 0 = no limit.
   */
  maxInFlightPerKey: number;
  /**
   * Percent of a provider's connections that one workspace's model requests in flight may hold
   * on this instance (1 to 100; 100 = no share); past it, 429 `in_flight_per_workspace_provider`.
   */
  workspaceProviderSharePct: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join("\n  - ")}`);
    this.name = "ConfigError";
  }
}

type Env = Record<string, string | undefined>;

/** A DuckDB memory size: a number and a unit (DuckDB reads KB/MB/GB/TB as powers of 1000, KiB… as 1024). */
const DUCKDB_MEMORY = /^\d+(\.\d+)?\s?(KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i;

/** One ingest worker per core up to 4 (2 did better than 1 on 2 cores: docs/performance.md). */
const DEFAULT_INGEST_WORKERS = Math.min(4, Math.max(1, availableParallelism()));

/** The directory of this package (where package.json is), from src/ or from a compiled dist/. */
function packageRoot(): string {
  for (let dir = import.meta.dirname; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) return process.cwd();
  }
}

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

function deepFreeze<T>(o: T): T {
  if (o && typeof o === "object" && !Buffer.isBuffer(o)) {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

export function loadConfig(env: Env = process.env): Readonly<Config> {
  const problems: string[] = [];
  const str = (name: string): string | null => {
    const v = env[name];
    return v === undefined || v.trim() === "" ? null : v.trim();
  };
  const int = (name: string, def: number, min: number, max: number): number => {
    const v = str(name);
    if (v === null) return def;
    if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
      problems.push(`${name}: must be an integer from ${min} to ${max} (got "${v}")`);
      return def;
    }
    return Number(v);
  };

  const port = int("PORT", 8080, 0, 65535);
  const databaseUrl = str("DATABASE_URL");
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push(
      "DATABASE_URL: must be a postgres:// or postgresql:// URL (unset it to use embedded SQLite)",
    );
  }
  const redisUrl = str("REDIS_URL");
  if (redisUrl !== null && !/^rediss?:\/\//.test(redisUrl)) {
    problems.push("REDIS_URL: must be a redis:// or rediss:// URL");
  }
  let encryptionKey: Buffer | null = null;
  const rawKey = str("GATEHOUSE_ENCRYPTION_KEY");
  if (rawKey !== null) {
    const buf = Buffer.from(rawKey, "base64");
    if (buf.length !== 32 || !/^[A-Za-z0-9+/]+={0,2}$/.test(rawKey)) {
      problems.push("GATEHOUSE_ENCRYPTION_KEY: must be 32 bytes encoded as base64 (openssl rand -base64 32)");
    } else encryptionKey = buf;
  }
  const clickhouseUrl = str("CLICKHOUSE_URL");
  if (clickhouseUrl !== null && !/^https?:\/\/[^/]/.test(clickhouseUrl)) {
    problems.push("CLICKHOUSE_URL: must be an http:// or https:// URL (unset it to use embedded DuckDB)");
  }
  const clickhouseDatabase = str("CLICKHOUSE_DATABASE");
  if (clickhouseDatabase !== null && !/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(clickhouseDatabase)) {
    problems.push("CLICKHOUSE_DATABASE: must be a database name (letters, digits, underscore)");
  }
  const duckdbMemoryLimit = str("DUCKDB_MEMORY_LIMIT");
  if (duckdbMemoryLimit !== null && !DUCKDB_MEMORY.test(duckdbMemoryLimit)) {
    problems.push(
      `DUCKDB_MEMORY_LIMIT: must be a size such as 512MB, 2GB or 1.5GiB (got "${duckdbMemoryLimit}")`,
    );
  }
  const duckdbThreads = str("DUCKDB_THREADS") === null ? null : int("DUCKDB_THREADS", 1, 1, 1024);
  const bootstrapKey = str("GATEHOUSE_BOOTSTRAP_KEY");
  if (bootstrapKey !== null && !KEY_RE.test(bootstrapKey)) {
    problems.push(
      "GATEHOUSE_BOOTSTRAP_KEY: must be a Gatehouse key, sk-gh-v1- and 64 lowercase hexadecimal characters " +
        "(for example: node -e \"console.log('sk-gh-v1-' + require('crypto').randomBytes(32).toString('hex'))\")",
    );
  }
  const metricsToken = str("GATEHOUSE_METRICS_TOKEN");
  if (metricsToken !== null && (metricsToken.length < 16 || /[^\x21-\x7e]/.test(metricsToken))) {
    problems.push("GATEHOUSE_METRICS_TOKEN: must be at least 16 printable characters without spaces");
  }
  const logLevel = (str("LOG_LEVEL") ?? "info") as Config["logLevel"];
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL: must be one of ${LOG_LEVELS.join(", ")}`);
  const bool = (name: string): boolean => {
    const v = str(name) ?? "false";
    if (v !== "true" && v !== "false") problems.push(`${name}: must be true or false`);
    return v === "true";
  };
  const allowSplitAnalytics = bool("GATEHOUSE_ALLOW_SPLIT_ANALYTICS");
  const trust = str("TRUST_PROXY") ?? "false";
  if (trust !== "true" && trust !== "false") problems.push("TRUST_PROXY: must be true or false");

  const refusePrivate = str("BROADCAST_REFUSE_PRIVATE_ADDRESSES") ?? "true";
  if (refusePrivate !== "true" && refusePrivate !== "false") {
    problems.push("BROADCAST_REFUSE_PRIVATE_ADDRESSES: must be true or false");
  }
  const allowedPrivateHosts: string[] = [];
  for (const entry of (str("BROADCAST_ALLOWED_PRIVATE_HOSTS") ?? "").split(",")) {
    if (entry.trim() === "") continue;
    const parsed = parseAllowedHost(entry);
    if (parsed === null) {
      problems.push(
        `BROADCAST_ALLOWED_PRIVATE_HOSTS: "${entry.trim()}" is not a CIDR (10.0.0.0/8, fd00::/8), an IP address or a host name`,
      );
    } else allowedPrivateHosts.push(parsed.kind === "name" ? normalHostName(entry.trim()) : entry.trim());
  }
  const broadcastWorkers = str("BROADCAST_WORKERS") ?? "true";
  if (broadcastWorkers !== "true" && broadcastWorkers !== "false") {
    problems.push("BROADCAST_WORKERS: must be true or false");
  }
  let providersFile: ProvidersFileSpec | null = null;
  const providersPath = str("GATEHOUSE_PROVIDERS_FILE");
  if (providersPath !== null) {
    try {
      providersFile = readProvidersFile(resolve(providersPath), env);
    } catch (err) {
      if (!(err instanceof ProvidersFileError)) throw err;
      problems.push(...err.problems.map((p) => `GATEHOUSE_PROVIDERS_FILE (${providersPath}): ${p}`));
    }
  }
  const reservationsRaw = str("GATEHOUSE_RESERVATIONS") ?? (databaseUrl === null ? "memory" : "postgres");
  if (reservationsRaw !== "memory" && reservationsRaw !== "postgres") {
    problems.push("GATEHOUSE_RESERVATIONS: must be memory or postgres");
  } else if (reservationsRaw === "postgres" && databaseUrl === null) {
    problems.push("GATEHOUSE_RESERVATIONS: postgres needs DATABASE_URL");
  }
  const recording = str("GATEHOUSE_RECORDING") ?? "durable";
  if (recording !== "durable" && recording !== "deferred") {
    problems.push("GATEHOUSE_RECORDING: must be durable or deferred");
  }
  const mock = str("GATEHOUSE_MOCK_PROVIDER") ?? "true";
  if (mock !== "true" && mock !== "false") problems.push("GATEHOUSE_MOCK_PROVIDER: must be true or false");

  const rate = (prefix: string, max: number): RateLimitConfig => ({
    max: int(`${prefix}_MAX`, max, 1, 1_000_000),
    windowMs: int(`${prefix}_WINDOW_MS`, 60_000, 1_000, 86_400_000),
  });

  const config: Config = {
    host: str("HOST") ?? "127.0.0.1",
    port,
    dataDir: resolve(str("GATEHOUSE_DATA_DIR") ?? "./data"),
    databaseUrl,
    redisUrl,
    clickhouseUrl,
    allowSplitAnalytics,
    clickhouseDatabase,
    duckdb: { memoryLimit: duckdbMemoryLimit, threads: duckdbThreads },
    ingestWorkers: int("INGEST_WORKERS", DEFAULT_INGEST_WORKERS, 0, 64),
    ingestFlushLingerMs: int("INGEST_FLUSH_LINGER_MS", 200, 0, 60_000),
    analytics: {
      queryTimeoutMs: int("ANALYTICS_QUERY_TIMEOUT_MS", 10_000, 100, 600_000),
      cacheTtlMs: int("ANALYTICS_CACHE_TTL_MS", 30_000, 0, 86_400_000),
    },
    activityCompaction: {
      chunkRows: int("ACTIVITY_COMPACTION_CHUNK_ROWS", 1_000_000, 0, 100_000_000),
      sealMs: int("ACTIVITY_COMPACTION_SEAL_MS", 3_600_000, 0, 30 * 86_400_000),
      intervalMs: int("ACTIVITY_COMPACTION_INTERVAL_MS", 60_000, 1_000, 86_400_000),
    },
    broadcast: {
      workers: broadcastWorkers === "true",
      pollMs: int("BROADCAST_POLL_MS", 250, 5, 60_000),
      attemptTimeoutMs: int("BROADCAST_ATTEMPT_TIMEOUT_MS", 15_000, 100, 300_000),
      retryBaseMs: int("BROADCAST_RETRY_BASE_MS", 1_000, 1, 3_600_000),
      retryMaxMs: int("BROADCAST_RETRY_MAX_MS", 900_000, 1, 86_400_000),
      maxAttempts: int("BROADCAST_MAX_ATTEMPTS", 20, 1, 1_000),
      maxAgeMs: int("BROADCAST_MAX_AGE_MS", 86_400_000, 1_000, 30 * 86_400_000),
      queueCap: int("BROADCAST_QUEUE_CAP", 1_000_000, 1, 1_000_000_000),
      breakerThreshold: int("BROADCAST_BREAKER_THRESHOLD", 5, 1, 1_000),
      breakerCooldownMs: int("BROADCAST_BREAKER_COOLDOWN_MS", 30_000, 1, 3_600_000),
      deliveredRetentionMs: int("BROADCAST_DELIVERED_RETENTION_MS", 3_600_000, 0, 30 * 86_400_000),
      deadRetentionMs: int("BROADCAST_DEAD_RETENTION_MS", 7 * 86_400_000, 0, 365 * 86_400_000),
      refusePrivateAddresses: refusePrivate !== "false",
      allowedPrivateHosts,
      concurrency: int("BROADCAST_CONCURRENCY", 4, 1, 64),
      lingerMs: int("BROADCAST_LINGER_MS", 200, 0, 60_000),
    },
    encryptionKey,
    bootstrapKey,
    logLevel,
    trustProxy: trust === "true",
    metricsToken: metricsToken === null ? null : new Redacted(metricsToken),
    providersFile,
    webDir: resolve(str("GATEHOUSE_WEB_DIR") ?? join(packageRoot(), "dist", "web")),
    contentRetentionDays: int("GATEHOUSE_CONTENT_RETENTION_DAYS", 30, 1, 3_650),
    rateLimit: {
      management: rate("RATE_LIMIT_MANAGEMENT", 600),
      keyUpdate: rate("RATE_LIMIT_KEY_UPDATE", 120),
      analytics: rate("RATE_LIMIT_ANALYTICS", 64),
      ingest: rate("RATE_LIMIT_INGEST", 6_000),
      inference: rate("RATE_LIMIT_INFERENCE", 3_000),
    },
    gateway: {
      mockEnabled: mock !== "false",
      mockLatencyMs: int("GATEHOUSE_MOCK_LATENCY_MS", 0, 0, 600_000),
      upstreamTimeoutMs: int("GATEHOUSE_UPSTREAM_TIMEOUT_MS", 60_000, 100, 3_600_000),
      reservationTtlMs: int("GATEHOUSE_RESERVATION_TTL_MS", 60_000, 300, 3_600_000),
      reservations: reservationsRaw === "postgres" ? "postgres" : "memory",
      reservationVacuumRows: int("GATEHOUSE_RESERVATION_VACUUM_ROWS", 2_000, 0, 100_000_000),
      shutdownGraceMs: int("GATEHOUSE_SHUTDOWN_GRACE_MS", 10_000, 0, 600_000),
      recording: recording === "deferred" ? "deferred" : "durable",
      recordingGatherMs: int("GATEHOUSE_RECORDING_GATHER_MS", 10, 0, 1_000),
      recordingCommitDelayMs: int("GATEHOUSE_RECORDING_COMMIT_DELAY_MS", 2, 0, 1_000),
      recordingMaxQueued: int("GATEHOUSE_RECORDING_MAX_QUEUED", 1_000, 1, 100_000),
      broadcastMaxContextBytes: int("BROADCAST_MAX_CONTEXT_BYTES", 256 * 1024, 4096, 64 * 1024 * 1024),
      maxInFlightPerKey: int("GATEHOUSE_MAX_IN_FLIGHT_PER_KEY", 64, 0, 1_000_000),
      workspaceProviderSharePct: int("GATEHOUSE_WORKSPACE_PROVIDER_SHARE", 75, 1, 100),
    },
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(config);
}
