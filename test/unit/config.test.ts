import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/config.js";

const KEY_B64 = Buffer.alloc(32, 1).toString("base64");

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error("expected a ConfigError");
}

describe("loadConfig", () => {
  it("has a default for every variable", () => {
    const c = loadConfig({});
    expect(c).toEqual({
      host: "127.0.0.1",
      port: 8080,
      dataDir: resolve("./data"),
      databaseUrl: null,
      redisUrl: null,
      clickhouseUrl: null,
      allowSplitAnalytics: false,
      clickhouseDatabase: null,
      duckdb: { memoryLimit: null, threads: null },
      ingestWorkers: Math.min(4, Math.max(1, availableParallelism())),
      ingestFlushLingerMs: 200,
      analytics: { queryTimeoutMs: 10_000, cacheTtlMs: 30_000 },
      activityCompaction: { chunkRows: 1_000_000, sealMs: 3_600_000, intervalMs: 60_000 },
      encryptionKey: null,
      bootstrapKey: null,
      logLevel: "info",
      trustProxy: false,
      metricsToken: null,
      providersFile: null,
      broadcast: {
        workers: true,
        pollMs: 250,
        attemptTimeoutMs: 15_000,
        retryBaseMs: 1_000,
        retryMaxMs: 900_000,
        maxAttempts: 20,
        maxAgeMs: 86_400_000,
        queueCap: 1_000_000,
        breakerThreshold: 5,
        breakerCooldownMs: 30_000,
        deliveredRetentionMs: 3_600_000,
        deadRetentionMs: 604_800_000,
        refusePrivateAddresses: true,
        allowedPrivateHosts: [],
        concurrency: 4,
        lingerMs: 200,
      },
      webDir: resolve(import.meta.dirname, "../../dist/web"),
      contentRetentionDays: 30,
      rateLimit: {
        management: { max: 600, windowMs: 60_000 },
        keyUpdate: { max: 120, windowMs: 60_000 },
        analytics: { max: 64, windowMs: 60_000 },
        ingest: { max: 6_000, windowMs: 60_000 },
        inference: { max: 3_000, windowMs: 60_000 },
      },
      gateway: {
        mockEnabled: true,
        mockLatencyMs: 0,
        upstreamTimeoutMs: 60_000,
        reservationTtlMs: 60_000,
        reservationVacuumRows: 2_000,
        shutdownGraceMs: 10_000,
        reservations: "memory",
        recording: "durable",
        recordingGatherMs: 10,
        recordingCommitDelayMs: 2,
        recordingMaxQueued: 1_000,
        broadcastMaxContextBytes: 256 * 1024,
        maxInFlightPerKey: 64,
        workspaceProviderSharePct: 75,
      },
    });
  });

  it("GATEHOUSE_CONTENT_RETENTION_DAYS: whole days from 1 to 3650; anything else is reported", () => {
    expect(loadConfig({ GATEHOUSE_CONTENT_RETENTION_DAYS: "7" }).contentRetentionDays).toBe(7);
    for (const bad of ["0", "3651", "1.5", "week"]) {
      expect(problemsOf({ GATEHOUSE_CONTENT_RETENTION_DAYS: bad }), bad).toEqual([
        `GATEHOUSE_CONTENT_RETENTION_DAYS: must be an integer from 1 to 3650 (got "${bad}")`,
      ]);
    }
  });

  it("gateway: reservations default to postgres with DATABASE_URL; bad values are reported", () => {
    expect(loadConfig({ DATABASE_URL: "postgres://x/y" }).gateway.reservations).toBe("postgres");
    expect(() => loadConfig({ GATEHOUSE_RESERVATIONS: "redis" })).toThrow(
      /GATEHOUSE_RESERVATIONS: must be memory or postgres/,
    );
    expect(() => loadConfig({ GATEHOUSE_RESERVATIONS: "postgres" })).toThrow(/needs DATABASE_URL/);
    expect(() => loadConfig({ GATEHOUSE_MOCK_PROVIDER: "yes" })).toThrow(/GATEHOUSE_MOCK_PROVIDER/);
  });

  it("gateway: requests in flight per key (0 = no limit) and a workspace's share of a provider (1-100 %)", () => {
    expect(loadConfig({ GATEHOUSE_MAX_IN_FLIGHT_PER_KEY: "0" }).gateway.maxInFlightPerKey).toBe(0);
    expect(loadConfig({ GATEHOUSE_WORKSPACE_PROVIDER_SHARE: "100" }).gateway.workspaceProviderSharePct).toBe(
      100,
    );
    for (const bad of ["-1", "64.5", "many"]) {
      expect(() => loadConfig({ GATEHOUSE_MAX_IN_FLIGHT_PER_KEY: bad }), bad).toThrow(
        /GATEHOUSE_MAX_IN_FLIGHT_PER_KEY: must be an integer/,
      );
    }
    for (const bad of ["0", "101", "half"]) {
      expect(() => loadConfig({ GATEHOUSE_WORKSPACE_PROVIDER_SHARE: bad }), bad).toThrow(
        /GATEHOUSE_WORKSPACE_PROVIDER_SHARE: must be an integer from 1 to 100/,
      );
    }
  });

  it("INGEST_WORKERS: 0 (inline) to 64 ingest worker threads", () => {
    expect(loadConfig({ INGEST_WORKERS: "0" }).ingestWorkers).toBe(0);
    expect(loadConfig({ INGEST_WORKERS: "3" }).ingestWorkers).toBe(3);
    expect(loadConfig({ INGEST_FLUSH_LINGER_MS: "0" }).ingestFlushLingerMs).toBe(0);
    expect(loadConfig({ GATEHOUSE_RECORDING: "deferred" }).gateway.recording).toBe("deferred");
    expect(() => loadConfig({ GATEHOUSE_RECORDING: "later" })).toThrow(
      /GATEHOUSE_RECORDING: must be durable or deferred/,
    );
    expect(loadConfig({}).gateway.recordingGatherMs).toBe(10);
    expect(loadConfig({ GATEHOUSE_RECORDING_GATHER_MS: "0" }).gateway.recordingGatherMs).toBe(0);
    for (const bad of ["-1", "1001", "soon"]) {
      expect(() => loadConfig({ GATEHOUSE_RECORDING_GATHER_MS: bad }), bad).toThrow(
        /GATEHOUSE_RECORDING_GATHER_MS/,
      );
    }
    expect(loadConfig({}).gateway.recordingCommitDelayMs).toBe(2);
    expect(loadConfig({ GATEHOUSE_RECORDING_COMMIT_DELAY_MS: "0" }).gateway.recordingCommitDelayMs).toBe(0);
    for (const bad of ["-1", "1001", "soon"]) {
      expect(() => loadConfig({ GATEHOUSE_RECORDING_COMMIT_DELAY_MS: bad }), bad).toThrow(
        /GATEHOUSE_RECORDING_COMMIT_DELAY_MS/,
      );
    }
    expect(loadConfig({ BROADCAST_MAX_CONTEXT_BYTES: "4096" }).gateway.broadcastMaxContextBytes).toBe(4096);
    for (const bad of ["4095", "67108865", "lots"]) {
      expect(() => loadConfig({ BROADCAST_MAX_CONTEXT_BYTES: bad }), bad).toThrow(
        /BROADCAST_MAX_CONTEXT_BYTES/,
      );
    }
    expect(loadConfig({ GATEHOUSE_RECORDING_MAX_QUEUED: "1" }).gateway.recordingMaxQueued).toBe(1);
    for (const bad of ["0", "100001", "many"]) {
      expect(() => loadConfig({ GATEHOUSE_RECORDING_MAX_QUEUED: bad }), bad).toThrow(
        /GATEHOUSE_RECORDING_MAX_QUEUED/,
      );
    }
    expect(loadConfig({ GATEHOUSE_RESERVATION_VACUUM_ROWS: "0" }).gateway.reservationVacuumRows).toBe(0);
    for (const bad of ["-1", "100000001", "often"]) {
      expect(() => loadConfig({ GATEHOUSE_RESERVATION_VACUUM_ROWS: bad }), bad).toThrow(
        /GATEHOUSE_RESERVATION_VACUUM_ROWS/,
      );
    }
    expect(() => loadConfig({ INGEST_FLUSH_LINGER_MS: "-1" })).toThrow(/INGEST_FLUSH_LINGER_MS/);
    for (const bad of ["-1", "65", "two", "1.5"]) {
      expect(() => loadConfig({ INGEST_WORKERS: bad }), bad).toThrow(
        /INGEST_WORKERS: must be an integer from 0 to 64/,
      );
    }
  });

  it("reads every variable", () => {
    const c = loadConfig({
      HOST: "0.0.0.0",
      PORT: "9000",
      GATEHOUSE_DATA_DIR: "/var/lib/gatehouse",
      DATABASE_URL: "postgresql://u:p@db:5432/gh",
      REDIS_URL: "rediss://cache:6380",
      GATEHOUSE_ENCRYPTION_KEY: KEY_B64,
      GATEHOUSE_BOOTSTRAP_KEY: `sk-gh-v1-${"b".repeat(64)}`,
      LOG_LEVEL: "debug",
      TRUST_PROXY: "true",
      RATE_LIMIT_MANAGEMENT_MAX: "10",
      RATE_LIMIT_MANAGEMENT_WINDOW_MS: "1000",
      RATE_LIMIT_KEY_UPDATE_MAX: "11",
      RATE_LIMIT_KEY_UPDATE_WINDOW_MS: "2000",
      RATE_LIMIT_ANALYTICS_MAX: "12",
      RATE_LIMIT_ANALYTICS_WINDOW_MS: "86400000",
      RATE_LIMIT_INGEST_MAX: "13",
      RATE_LIMIT_INGEST_WINDOW_MS: "3000",
      RATE_LIMIT_INFERENCE_MAX: "14",
      RATE_LIMIT_INFERENCE_WINDOW_MS: "4000",
      GATEHOUSE_ALLOW_SPLIT_ANALYTICS: "true",
    });
    expect(c.allowSplitAnalytics).toBe(true);
    expect(c.host).toBe("0.0.0.0");
    expect(c.port).toBe(9000);
    expect(c.dataDir).toBe("/var/lib/gatehouse");
    expect(c.databaseUrl).toBe("postgresql://u:p@db:5432/gh");
    expect(c.redisUrl).toBe("rediss://cache:6380");
    expect(c.encryptionKey).toEqual(Buffer.alloc(32, 1));
    expect(c.bootstrapKey).toBe(`sk-gh-v1-${"b".repeat(64)}`);
    expect(c.logLevel).toBe("debug");
    expect(c.trustProxy).toBe(true);
    expect(c.rateLimit).toEqual({
      management: { max: 10, windowMs: 1000 },
      keyUpdate: { max: 11, windowMs: 2000 },
      analytics: { max: 12, windowMs: 86_400_000 },
      ingest: { max: 13, windowMs: 3000 },
      inference: { max: 14, windowMs: 4000 },
    });
  });

  it("reads the activity store and analytics variables, and names bad ones", () => {
    const c = loadConfig({
      CLICKHOUSE_URL: "https://u:p@ch:8443",
      CLICKHOUSE_DATABASE: "gatehouse_activity",
      ANALYTICS_QUERY_TIMEOUT_MS: "2500",
      ANALYTICS_CACHE_TTL_MS: "0",
      DUCKDB_MEMORY_LIMIT: "1.5GiB",
      DUCKDB_THREADS: "2",
    });
    expect(c.duckdb).toEqual({ memoryLimit: "1.5GiB", threads: 2 });
    expect(c.clickhouseUrl).toBe("https://u:p@ch:8443");
    expect(c.clickhouseDatabase).toBe("gatehouse_activity");
    expect(c.analytics).toEqual({ queryTimeoutMs: 2500, cacheTtlMs: 0 });
    expect(problemsOf({ CLICKHOUSE_URL: "tcp://ch:9000" }).join()).toContain("CLICKHOUSE_URL");
    expect(problemsOf({ CLICKHOUSE_DATABASE: "a-b; drop" }).join()).toContain("CLICKHOUSE_DATABASE");
    expect(problemsOf({ ANALYTICS_QUERY_TIMEOUT_MS: "10" }).join()).toContain("ANALYTICS_QUERY_TIMEOUT_MS");
  });

  it("reads the activity compaction variables (0 chunk rows turns compaction off), and names bad ones", () => {
    const c = loadConfig({
      ACTIVITY_COMPACTION_CHUNK_ROWS: "0",
      ACTIVITY_COMPACTION_SEAL_MS: "600000",
      ACTIVITY_COMPACTION_INTERVAL_MS: "5000",
    });
    expect(c.activityCompaction).toEqual({ chunkRows: 0, sealMs: 600_000, intervalMs: 5_000 });
    expect(problemsOf({ ACTIVITY_COMPACTION_CHUNK_ROWS: "-1" }).join()).toContain(
      "ACTIVITY_COMPACTION_CHUNK_ROWS",
    );
    expect(problemsOf({ ACTIVITY_COMPACTION_INTERVAL_MS: "10" }).join()).toContain(
      "ACTIVITY_COMPACTION_INTERVAL_MS",
    );
  });

  it("BROADCAST_ALLOWED_PRIVATE_HOSTS: CIDRs, IPs and host names; a bad entry is a problem naming the variable", () => {
    expect(loadConfig({}).broadcast).toMatchObject({ refusePrivateAddresses: true, allowedPrivateHosts: [] });
    expect(loadConfig({ BROADCAST_REFUSE_PRIVATE_ADDRESSES: "false" }).broadcast.refusePrivateAddresses).toBe(
      false,
    );
    expect(
      loadConfig({
        BROADCAST_ALLOWED_PRIVATE_HOSTS: " 10.0.0.0/8, fd00::/8,::1 ,[fe80::1],Collector.Internal., ",
      }).broadcast.allowedPrivateHosts,
    ).toEqual(["10.0.0.0/8", "fd00::/8", "::1", "[fe80::1]", "collector.internal"]);
    for (const bad of [
      "10.0.0.0/33",
      "::1/129",
      "10.0.0.0/x",
      "http://x",
      "a b",
      "host/8",
      "-bad-.example",
    ]) {
      const problems = problemsOf({ BROADCAST_ALLOWED_PRIVATE_HOSTS: `127.0.0.1,${bad}` }).join();
      expect(problems, bad).toContain("BROADCAST_ALLOWED_PRIVATE_HOSTS");
    }
  });

  it("BROADCAST_LINGER_MS: 0 (send at once) to 60000, default 200", () => {
    expect(loadConfig({}).broadcast.lingerMs).toBe(200);
    expect(loadConfig({ BROADCAST_LINGER_MS: "0" }).broadcast.lingerMs).toBe(0);
    expect(loadConfig({ BROADCAST_LINGER_MS: "1000" }).broadcast.lingerMs).toBe(1_000);
    expect(problemsOf({ BROADCAST_LINGER_MS: "-5" }).join()).toContain("BROADCAST_LINGER_MS");
    expect(problemsOf({ BROADCAST_LINGER_MS: "60001" }).join()).toContain("BROADCAST_LINGER_MS");
  });

  it("accepts postgres:// and redis:// schemes and port 0 (any free port)", () => {
    const c = loadConfig({ DATABASE_URL: "postgres://h/db", REDIS_URL: "redis://h", PORT: "0" });
    expect(c.databaseUrl).toBe("postgres://h/db");
    expect(c.redisUrl).toBe("redis://h");
    expect(c.port).toBe(0);
  });

  it("treats empty and blank values as unset and trims values", () => {
    const c = loadConfig({ PORT: "", DATABASE_URL: "   ", LOG_LEVEL: " warn ", HOST: " ::1 " });
    expect(c.port).toBe(8080);
    expect(c.databaseUrl).toBeNull();
    expect(c.logLevel).toBe("warn");
    expect(c.host).toBe("::1");
  });

  it.each([
    ["PORT", "abc"],
    ["PORT", "65536"],
    ["PORT", "-1"],
    ["PORT", "80.5"],
    ["DATABASE_URL", "mysql://h/db"],
    ["DATABASE_URL", "/var/lib/db.sqlite"],
    ["REDIS_URL", "http://cache:6379"],
    ["GATEHOUSE_ENCRYPTION_KEY", Buffer.alloc(16).toString("base64")],
    ["GATEHOUSE_ENCRYPTION_KEY", "not base64 at all!!"],
    ["GATEHOUSE_ENCRYPTION_KEY", Buffer.alloc(32).toString("hex")],
    ["GATEHOUSE_BOOTSTRAP_KEY", "short"],
    ["GATEHOUSE_BOOTSTRAP_KEY", "x".repeat(31)],
    // Anything but a key of Gatehouse's own shape: long random texts, another product's key, a
    // Gatehouse key with a character too few or too many, upper case, or surrounding space.
    ["GATEHOUSE_BOOTSTRAP_KEY", `ops-managed-${"k".repeat(40)}`],
    ["GATEHOUSE_BOOTSTRAP_KEY", `sk-or-v1-${"a".repeat(64)}`],
    ["GATEHOUSE_BOOTSTRAP_KEY", `sk-gh-v1-${"a".repeat(63)}`],
    ["GATEHOUSE_BOOTSTRAP_KEY", `sk-gh-v1-${"a".repeat(65)}`],
    ["GATEHOUSE_BOOTSTRAP_KEY", `sk-gh-v1-${"A".repeat(64)}`],
    ["GATEHOUSE_BOOTSTRAP_KEY", `sk-gh-v1-${"g".repeat(64)}`],
    ["LOG_LEVEL", "verbose"],
    ["TRUST_PROXY", "yes"],
    ["TRUST_PROXY", "1"],
    ["RATE_LIMIT_MANAGEMENT_MAX", "0"],
    ["RATE_LIMIT_MANAGEMENT_MAX", "1000001"],
    ["RATE_LIMIT_MANAGEMENT_WINDOW_MS", "999"],
    ["RATE_LIMIT_KEY_UPDATE_MAX", "ten"],
    ["RATE_LIMIT_KEY_UPDATE_WINDOW_MS", "86400001"],
    ["RATE_LIMIT_ANALYTICS_MAX", "1e3"],
    ["RATE_LIMIT_ANALYTICS_WINDOW_MS", "-5"],
    ["DUCKDB_MEMORY_LIMIT", "2"],
    ["DUCKDB_MEMORY_LIMIT", "80%"],
    ["DUCKDB_MEMORY_LIMIT", "1GB'; SET x = '1"],
    ["DUCKDB_THREADS", "0"],
    ["DUCKDB_THREADS", "two"],
  ])("names %s when its value is bad (%j)", (name, value) => {
    const problems = problemsOf({ [name]: value });
    expect(problems).toHaveLength(1);
    expect(problems[0]!.startsWith(`${name}: `)).toBe(true);
  });

  it("never echoes secret values in its messages", () => {
    const secret = "sk-secret-" + "z".repeat(8);
    const problems = problemsOf({ GATEHOUSE_BOOTSTRAP_KEY: secret, GATEHOUSE_ENCRYPTION_KEY: secret });
    expect(problems.join("\n")).not.toContain(secret);
  });

  it("reports every problem together, in one error", () => {
    const env = {
      PORT: "abc",
      DATABASE_URL: "mysql://x",
      REDIS_URL: "memcached://x",
      GATEHOUSE_ENCRYPTION_KEY: "short",
      GATEHOUSE_BOOTSTRAP_KEY: "short",
      LOG_LEVEL: "loud",
      TRUST_PROXY: "maybe",
      RATE_LIMIT_ANALYTICS_MAX: "0",
    };
    const problems = problemsOf(env);
    expect(problems.map((p) => p.split(":")[0])).toEqual([
      "PORT",
      "DATABASE_URL",
      "REDIS_URL",
      "GATEHOUSE_ENCRYPTION_KEY",
      "GATEHOUSE_BOOTSTRAP_KEY",
      "LOG_LEVEL",
      "TRUST_PROXY",
      "RATE_LIMIT_ANALYTICS_MAX",
    ]);
    let message = "";
    try {
      loadConfig(env);
    } catch (err) {
      message = (err as Error).message;
    }
    for (const name of Object.keys(env)) expect(message).toContain(name);
  });

  it("returns a deeply frozen object", () => {
    const c = loadConfig({ GATEHOUSE_ENCRYPTION_KEY: KEY_B64 });
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.rateLimit)).toBe(true);
    expect(Object.isFrozen(c.rateLimit.management)).toBe(true);
    expect(() => {
      (c as { port: number }).port = 1;
    }).toThrow(TypeError);
    expect(() => {
      (c.rateLimit.keyUpdate as { max: number }).max = 1;
    }).toThrow(TypeError);
  });

  it("reads nothing but the environment it is given", () => {
    const before = process.env.PORT;
    process.env.PORT = "not-a-port";
    try {
      expect(loadConfig({}).port).toBe(8080);
    } finally {
      if (before === undefined) delete process.env.PORT;
      else process.env.PORT = before;
    }
  });
});
