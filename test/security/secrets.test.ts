import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { loggerOptions } from "../../src/http/logger.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";
import { http, killAll, startServer, stopServer, type ChildServer } from "../helpers/child-server.js";

/**
 * Secrets never leave in clear: not in a log line (at level trace, with the production logger
 * options), not in a response body, except a new key in its one create response. Every
 * credential used below carries the marker "LEAK" so that the checks can also look for pieces.
 */
const KEY_RE = /sk-gh-v1-[0-9a-f]{64}/g;

/** Captures every log line the app writes, as the production logger would write it. */
function captureStream() {
  const lines: string[] = [];
  let partial = "";
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      partial += chunk.toString("utf8");
      const parts = partial.split("\n");
      partial = parts.pop() ?? "";
      lines.push(...parts.filter((l) => l !== ""));
      done();
    },
  });
  return { stream, lines };
}

// Destination credentials: config secret fields, header values, URL userinfo.
const SECRETS = {
  langfusePublic: "pk-lf-LEAK-public-0123456789",
  langfuseSecret: "sk-lf-LEAK-secret-0123456789",
  urlUser: "LEAKuser",
  urlPassword: "LEAK-url-password-9876",
  headerToken: "Bearer LEAK-otel-header-token-555",
  headerApiKey: "hdr-LEAK-apikey-777",
  webhookSig: "whsec_LEAK_signature_4242",
  datadog: "dd-LEAK-0123456789abcdef0123",
  s3Access: "AKIALEAK0123456789AB",
  s3Secret: "s3secret/LEAK/0123456789abcdef",
  s3Session: "session-LEAK-token-0123456789",
  sentryDsn: "https://LEAKdsnpublickey0123@o123.ingest.sentry.io/4567",
  patchedSecret: "sk-lf-LEAK-rotated-0123456789",
  patchedHeader: "rotated-LEAK-header-888",
  externalApiKey: "ext-provider-LEAK-key-0123456789abcdefghij",
  invalidBodySecret: "in-LEAK-invalid-body-31337",
  invalidJsonSecret: "in-LEAK-broken-json-27182",
};

describe("secrets stay secret: logs at level trace and response bodies", () => {
  let t: TestApp;
  const log = captureStream();
  /** Every key string in plain text seen during the session, and the one response allowed to show it. */
  const plainKeys: { key: string; createResponse: string | null }[] = [];
  /** Every response of the session: what the client received (status, headers, body). */
  const responses: { what: string; status: number; text: string }[] = [];

  const record = async (what: string, p: ReturnType<TestApp["call"]>) => {
    const res = await p;
    responses.push({ what, status: res.statusCode, text: `${JSON.stringify(res.headers)}\n${res.body}` });
    return res;
  };

  let error500: { body: string; requestId: string } | null = null;

  beforeAll(async () => {
    // The production logger options, with only the destination swapped for a captured stream.
    const opts = loggerOptions(loadConfig({ GATEHOUSE_DATA_DIR: "/tmp/gatehouse-test", LOG_LEVEL: "trace" }));
    expect(opts).toMatchObject({ level: "trace" });
    t = await makeTestApp({ logger: { ...(opts as object), stream: log.stream } });
    plainKeys.push({ key: t.key, createResponse: null });

    // --- API keys
    const created = await record(
      "POST /keys",
      t.call({
        method: "POST",
        url: "/api/v1/keys",
        payload: { name: "ordinary", limit: 10, external: { api_key: SECRETS.externalApiKey, user: "u-1" } },
      }),
    );
    expect(created.statusCode).toBe(201);
    const ordinary = created.json().key as string;
    plainKeys.push({ key: ordinary, createResponse: created.body });
    const hash = created.json().data.hash as string;
    const second = await record(
      "POST /keys (2)",
      t.call({ method: "POST", url: "/api/v1/keys", payload: { name: "second" } }),
    );
    plainKeys.push({ key: second.json().key as string, createResponse: second.body });

    expect(
      (
        await record(
          "PATCH /keys",
          t.call({ method: "PATCH", url: `/api/v1/keys/${hash}`, payload: { name: "renamed", limit: 20 } }),
        )
      ).statusCode,
    ).toBe(200);
    expect(
      (await record("GET /key (ordinary)", t.call({ method: "GET", url: "/api/v1/key", auth: ordinary })))
        .statusCode,
    ).toBe(200);
    expect(
      (await record("GET /key (management)", t.call({ method: "GET", url: "/api/v1/key" }))).statusCode,
    ).toBe(200);
    expect((await record("GET /keys", t.call({ method: "GET", url: "/api/v1/keys" }))).statusCode).toBe(200);
    expect(
      (await record("GET /keys/:hash", t.call({ method: "GET", url: `/api/v1/keys/${hash}` }))).statusCode,
    ).toBe(200);
    // An ordinary key on a management route, a wrong key, no key.
    expect(
      (await record("403", t.call({ method: "GET", url: "/api/v1/keys", auth: ordinary }))).statusCode,
    ).toBe(403);
    expect(
      (await record("401 wrong", t.call({ method: "GET", url: "/api/v1/keys", auth: `${ordinary}x` })))
        .statusCode,
    ).toBe(401);
    expect(
      (
        await record(
          "401 scheme",
          t.call({
            method: "GET",
            url: "/api/v1/keys",
            auth: null,
            headers: { authorization: `Basic ${ordinary}` },
          }),
        )
      ).statusCode,
    ).toBe(401);

    // --- destinations of several types, with secrets, headers and URL credentials
    const dest = async (type: string, config: Record<string, unknown>) => {
      const res = await record(
        `POST destination ${type}`,
        t.call({
          method: "POST",
          url: "/api/v1/observability/destinations",
          payload: { name: type, type, config },
        }),
      );
      expect(res.statusCode, res.body).toBe(201);
      return res.json().data.id as string;
    };
    const langfuse = await dest("langfuse", {
      publicKey: SECRETS.langfusePublic,
      secretKey: SECRETS.langfuseSecret,
      baseUrl: `https://${SECRETS.urlUser}:${SECRETS.urlPassword}@langfuse.example.com/`,
      headers: { "X-Api-Key": SECRETS.headerApiKey },
    });
    const otel = await dest("otel-collector", {
      endpoint: "https://otel.example.com:4318",
      headers: { Authorization: SECRETS.headerToken },
    });
    await dest("webhook", {
      url: "https://hooks.example.com/in",
      headers: { "X-Signature": SECRETS.webhookSig },
    });
    await dest("datadog", { apiKey: SECRETS.datadog, mlApp: "app" });
    await dest("s3", {
      bucketName: "bucket",
      accessKeyId: SECRETS.s3Access,
      secretAccessKey: SECRETS.s3Secret,
      sessionToken: SECRETS.s3Session,
    });
    await dest("sentry", {
      dsn: SECRETS.sentryDsn,
      otlpEndpoint: "https://o123.ingest.sentry.io/api/4567/otlp",
    });

    const got = await record(
      "GET destination",
      t.call({ method: "GET", url: `/api/v1/observability/destinations/${langfuse}` }),
    );
    // Echo the masked config back (keeps secrets), then rotate one secret and one header.
    expect(
      (
        await record(
          "PATCH destination echo",
          t.call({
            method: "PATCH",
            url: `/api/v1/observability/destinations/${langfuse}`,
            payload: { config: got.json().data.config },
          }),
        )
      ).statusCode,
    ).toBe(200);
    expect(
      (
        await record(
          "PATCH destination rotate",
          t.call({
            method: "PATCH",
            url: `/api/v1/observability/destinations/${langfuse}`,
            payload: {
              config: { secretKey: SECRETS.patchedSecret, headers: { "X-Api-Key": SECRETS.patchedHeader } },
            },
          }),
        )
      ).statusCode,
    ).toBe(200);
    expect(
      (
        await record(
          "PATCH otel",
          t.call({
            method: "PATCH",
            url: `/api/v1/observability/destinations/${otel}`,
            payload: {
              name: "otel 2",
              config: { headers: { Authorization: SECRETS.headerToken, "X-Extra": SECRETS.patchedHeader } },
            },
          }),
        )
      ).statusCode,
    ).toBe(200);
    expect(
      (
        await record(
          "list destinations",
          t.call({ method: "GET", url: "/api/v1/observability/destinations" }),
        )
      ).statusCode,
    ).toBe(200);

    // --- 400s with secret values inside invalid bodies
    const bad = async (what: string, method: "POST" | "PATCH", url: string, payload: unknown) => {
      const res = await record(what, t.call({ method, url, payload: payload as Record<string, unknown> }));
      expect(res.statusCode, `${what}: ${res.body}`).toBe(400);
    };
    const s = SECRETS.invalidBodySecret;
    await bad("key name not a string", "POST", "/api/v1/keys", { name: 1, external: { api_key: s } });
    await bad("external.api_key too short", "POST", "/api/v1/keys", {
      name: "x",
      external: { api_key: s.slice(0, 20) },
    });
    await bad("key limit is a secret string", "PATCH", `/api/v1/keys/${hash}`, { limit: s });
    await bad("unknown destination type", "POST", "/api/v1/observability/destinations", {
      name: "x",
      type: s,
      config: { apiKey: s },
    });
    await bad("enum field with a secret", "POST", "/api/v1/observability/destinations", {
      name: "x",
      type: "newrelic",
      config: { licenseKey: s, region: s },
    });
    await bad("url field with credentials", "POST", "/api/v1/observability/destinations", {
      name: "x",
      type: "langfuse",
      config: { publicKey: s, secretKey: s, baseUrl: `ftp://user:${s}@host/` },
    });
    await bad("url that does not parse", "POST", "/api/v1/observability/destinations", {
      name: "x",
      type: "otel-collector",
      config: { endpoint: `https://user:${s}@[bad`, headers: { Authorization: s } },
    });
    await bad(
      "header value with a control character",
      "PATCH",
      `/api/v1/observability/destinations/${otel}`,
      {
        config: { headers: { Authorization: `${s}\r\nX-Injected: 1` } },
      },
    );
    await bad("header value not a string", "PATCH", `/api/v1/observability/destinations/${otel}`, {
      config: { headers: { Authorization: s, "X-Num": 5 } },
    });
    await bad("sentry dsn that does not match", "POST", "/api/v1/observability/destinations", {
      name: "x",
      type: "sentry",
      config: { dsn: `not-a-dsn-${s}` },
    });
    await bad("required secret missing beside a secret", "POST", "/api/v1/observability/destinations", {
      name: "x",
      type: "langfuse",
      config: { publicKey: s },
    });
    await bad(
      "secret too short beside a secret header",
      "PATCH",
      `/api/v1/observability/destinations/${langfuse}`,
      {
        config: { secretKey: "abc", headers: { "X-Api-Key": s } },
      },
    );
    // Invalid JSON that carries a secret.
    const broken = await record(
      "invalid JSON",
      t.call({
        method: "POST",
        url: "/api/v1/observability/destinations",
        headers: { "content-type": "application/json" },
        payload: `{"name":"x","type":"datadog","config":{"apiKey":"${SECRETS.invalidJsonSecret}"`,
      }),
    );
    expect(broken.statusCode).toBe(400);

    // --- a 500: the store goes away under the app
    await t.ctx.store.close();
    const failed = await record("500", t.call({ method: "GET", url: "/api/v1/keys" }));
    expect(failed.statusCode).toBe(500);
    error500 = { body: failed.body, requestId: String(failed.headers["x-request-id"]) };
  }, 60_000);

  afterAll(async () => {
    // The store is already closed (the 500); closing it again may throw.
    await t?.close().catch(() => undefined);
  });

  const allSecrets = () => [...Object.values(SECRETS), ...plainKeys.map((k) => k.key)];

  it("the session produced log lines at every level down to the request logs", () => {
    expect(log.lines.length).toBeGreaterThan(responses.length);
    const parsed = log.lines.map((l) => JSON.parse(l) as { msg?: string; level: number });
    expect(parsed.some((l) => l.msg === "request completed")).toBe(true);
    expect(parsed.some((l) => l.level >= 50)).toBe(true); // the 500
    // The 500's request line: its request id, method, path and status, and nothing else.
    const line = parsed.find(
      (l) => l.msg === "request completed" && (l as { reqId?: string }).reqId === error500!.requestId,
    ) as Record<string, unknown> | undefined;
    expect(line).toMatchObject({
      level: 30,
      req: { method: "GET", url: "/api/v1/keys", id: error500!.requestId },
      res: { statusCode: 500 },
    });
    expect(Object.keys(line!).sort()).toEqual(
      ["hostname", "level", "msg", "pid", "reqId", "req", "res", "responseTime", "time"].sort(),
    );
  });

  it("no log line holds an API key, a destination secret, a header value or a URL password", () => {
    const text = log.lines.join("\n");
    expect(text.match(KEY_RE)).toBeNull();
    for (const secret of allSecrets()) expect(text, `log leaks ${secret}`).not.toContain(secret);
    // Not even a recognisable piece of one.
    expect(text).not.toContain("LEAK");
  });

  it("no response holds a plain key except that key's own create response", () => {
    for (const { key, createResponse } of plainKeys) {
      for (const r of responses) {
        if (createResponse !== null && r.text.includes(createResponse)) continue;
        expect(r.text, `${r.what} leaks a key`).not.toContain(key);
      }
    }
    // The create responses themselves show exactly one key: the new one.
    for (const { key, createResponse } of plainKeys) {
      if (createResponse !== null) expect(createResponse.match(KEY_RE)).toEqual([key]);
    }
  });

  it("no response holds a destination secret, header value, URL password or BYOK key", () => {
    for (const r of responses) {
      for (const secret of Object.values(SECRETS))
        expect(r.text, `${r.what} leaks ${secret}`).not.toContain(secret);
      expect(r.text, `${r.what}`).not.toContain("LEAK");
    }
  });

  it("the logger redacts credential-named fields at the top level and one level down", () => {
    const before = log.lines.length;
    const v = (n: number) => `LEAK-direct-${n}`;
    t.app.log.info(
      {
        key: v(1),
        apiKey: v(2),
        api_key: v(3),
        config: { secretKey: v(4) },
        headers: { authorization: v(5) },
        password: v(6),
        token: v(7),
        secret: v(8),
        authorization: v(9),
        bootstrapKey: v(10),
      },
      "direct",
    );
    t.app.log.warn(
      {
        destination: { config: { apiKey: v(11) }, headers: { "X-Api-Key": v(12) } },
        body: { key: v(13), external: { api_key: v(14) } },
        err: Object.assign(new Error("wrapped"), { password: v(15) }),
      },
      "nested",
    );
    const lines = log.lines.slice(before);
    expect(lines).toHaveLength(2);
    expect(lines.join("\n")).not.toContain("LEAK");
    expect(lines.join("\n")).toContain("[redacted]");
    // Ordinary fields still come through.
    expect(JSON.parse(lines[1]!).err.message).toBe("wrapped");
  });

  it("the 500 says nothing of internals and carries the request id that the log line has", () => {
    expect(error500).not.toBeNull();
    const body = JSON.parse(error500!.body) as {
      error: { code: number; message: string; metadata: { request_id: string } };
    };
    expect(body).toEqual({
      error: { code: 500, message: "Internal Server Error", metadata: { request_id: expect.any(String) } },
    });
    expect(body.error.metadata.request_id).toBe(error500!.requestId);
    expect(error500!.body).not.toMatch(
      /stack|at .*\.ts|select|from "|driver|kysely|sqlite|destroyed|Error:/i,
    );
    const errorLines = log.lines
      .map((l) => JSON.parse(l) as { level: number; reqId?: string; err?: { stack?: string } })
      .filter((l) => l.level >= 50);
    const mine = errorLines.filter((l) => l.reqId === body.error.metadata.request_id);
    expect(mine.length).toBeGreaterThan(0);
    // The operator gets the cause in the log.
    expect(mine[0]!.err?.stack).toBeTruthy();
  });
});

describe("secrets stay secret: the server process at LOG_LEVEL=trace", () => {
  let s: ChildServer;
  let firstKey = "";
  const created: string[] = [];

  beforeAll(async () => {
    s = await startServer({ LOG_LEVEL: "trace" });
    firstKey = (s.stdout().match(KEY_RE) ?? [])[0] ?? "";
    expect(firstKey).not.toBe("");
    const k = await http(`${s.base}/keys`, { method: "POST", key: firstKey, body: { name: "proc key" } });
    expect(k.status).toBe(201);
    created.push(k.body.key as string);
    expect((await http(`${s.base}/key`, { key: created[0]! })).status).toBe(200);
    const d = await http(`${s.base}/observability/destinations`, {
      method: "POST",
      key: firstKey,
      body: {
        name: "lf",
        type: "langfuse",
        config: {
          publicKey: SECRETS.langfusePublic,
          secretKey: SECRETS.langfuseSecret,
          baseUrl: `https://${SECRETS.urlUser}:${SECRETS.urlPassword}@lf.example.com`,
          headers: { "X-Api-Key": SECRETS.headerApiKey },
        },
      },
    });
    expect(d.status).toBe(201);
    const p = await http(`${s.base}/observability/destinations/${d.body.data.id}`, {
      method: "PATCH",
      key: firstKey,
      body: { config: { secretKey: SECRETS.patchedSecret } },
    });
    expect(p.status).toBe(200);
    const bad = await http(`${s.base}/observability/destinations`, {
      method: "POST",
      key: firstKey,
      body: {
        name: "x",
        type: "newrelic",
        config: { licenseKey: SECRETS.invalidBodySecret, region: SECRETS.invalidBodySecret },
      },
    });
    expect(bad.status).toBe(400);
    expect((await http(`${s.base}/keys`, { key: created[0]! })).status).toBe(403);
    expect((await http(`${s.base}/keys`, { key: `${firstKey}0` })).status).toBe(401);
  }, 60_000);

  afterAll(async () => {
    if (s) await stopServer(s).catch(() => undefined);
    killAll();
  }, 30_000);

  it("the first-start key appears once, in the banner; no other key or secret appears at all", async () => {
    expect((await stopServer(s)).code).toBe(0);
    const out = s.stdout() + s.stderr();
    // The session was logged.
    expect(out).toContain("request completed");
    expect(out.match(KEY_RE)).toEqual([firstKey]);
    const bannerLine = out.split("\n").find((l) => l.includes(firstKey))!;
    expect(bannerLine.trim()).toBe(firstKey);
    expect(out.indexOf("shown only this once")).toBeLessThan(out.indexOf(firstKey));
    for (const k of created) expect(out).not.toContain(k);
    expect(out).not.toContain("LEAK");
  });

  it("a configured GATEHOUSE_BOOTSTRAP_KEY never appears in the output, at trace", async () => {
    const bootKey = `sk-gh-v1-${"0ea4".repeat(16)}`;
    const t = await startServer({ LOG_LEVEL: "trace", GATEHOUSE_BOOTSTRAP_KEY: bootKey });
    try {
      expect((await http(`${t.base}/workspaces`, { key: bootKey })).status).toBe(200);
      expect((await http(`${t.base}/keys`, { key: `${bootKey}x` })).status).toBe(401);
    } finally {
      expect((await stopServer(t)).code).toBe(0);
    }
    const out = t.stdout() + t.stderr();
    expect(out).toContain("request completed");
    // Nor any piece of it (the key is made of one repeated marker).
    expect(out).not.toContain("0ea40ea4");
    expect(out.match(KEY_RE)).toBeNull();
  });
});

describe("credentials in URLs and free text never reach the request log", () => {
  it("a key in a query string, a key-shaped path segment and a Bearer value in a message are redacted", async () => {
    const log = captureStream();
    const opts = loggerOptions(loadConfig({ GATEHOUSE_DATA_DIR: "/tmp/gatehouse-test", LOG_LEVEL: "info" }));
    const t = await makeTestApp({ logger: { ...(opts as object), stream: log.stream } });
    try {
      const inQuery = await t.call({ method: "GET", url: `/api/v1/key?api_key=${t.key}&x=1` });
      expect(inQuery.statusCode).toBe(200);
      const keyShaped = `sk-gh-v1-${"ab".repeat(32)}`;
      const inPath = await t.call({ method: "GET", url: `/api/v1/workspaces/${keyShaped}` });
      expect(inPath.statusCode).toBe(404);
      t.app.log.info({ note: `sent Bearer ${t.key} upstream` }, `upstream said ${keyShaped}`);
      await new Promise((r) => setTimeout(r, 50));
      const text = log.lines.join("\n");
      expect(text).toContain("request completed");
      expect(text).toContain('"url":"/api/v1/key?[redacted]"');
      expect(text).toContain("Bearer [redacted]");
      expect(text).not.toContain(t.key);
      expect(text).not.toContain(t.key.slice("sk-gh-v1-".length, 30));
      expect(text).not.toContain("ab".repeat(32));
      expect(text.match(KEY_RE)).toBeNull();
    } finally {
      await t.close();
    }
  });
});
