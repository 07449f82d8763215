/* eslint-disable @typescript-eslint/no-unsafe-return -- the JSON bodies under test are untyped by nature */
import aws4 from "aws4";
import { checkServerIdentity, type PeerCertificate } from "node:tls";
import { query } from "chdb";
import { Ajv } from "ajv";
import addFormatsModule from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encoderFor, requestToSend } from "../../src/broadcast/encoders/index.js";
import { s3ObjectKey } from "../../src/broadcast/encoders/s3.js";
import { startCaptureServer } from "../helpers/capture-server.js";
import { bareGeneration, privateGeneration, sampleGeneration } from "../helpers/broadcast-generations.js";
import { configFor, planted } from "../helpers/destination-configs.js";
import { DATADOG_SPANS_REQUEST } from "./schemas/datadog-llmobs-spans.js";
import { validateConfig } from "../../src/domain/destinations/validate-config.js";

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));

/**
 * aws4 (an independent SigV4 implementation) recomputes a signed S3 PUT's Authorization from its
 * URL, headers and body with the destination's credentials (region eu-west-1): the same value.
 */
function expectAws4Signature(
  signed: { url: string; headers: Record<string, string>; body: unknown },
  config: Record<string, unknown>,
): void {
  const u = new URL(signed.url);
  const { authorization, ...rest } = signed.headers;
  const again = aws4.sign(
    {
      host: u.host,
      method: "PUT",
      path: u.pathname,
      service: "s3",
      region: "eu-west-1",
      body: signed.body as string,
      headers: { ...rest },
    },
    {
      accessKeyId: config.accessKeyId as string,
      secretAccessKey: config.secretAccessKey as string,
      sessionToken: config.sessionToken as string,
    },
  );
  expect(authorization).toBe((again.headers as Record<string, string>).Authorization);
}

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const T0 = Date.UTC(2026, 10, 24, 7);
const batch = () => [sampleGeneration(), bareGeneration("gen-2", T0)];
const json = (body: Buffer | string | Uint8Array): any =>
  JSON.parse(Buffer.from(body as Uint8Array).toString("utf8"));

let receiver: Awaited<ReturnType<typeof startCaptureServer>>;
beforeAll(async () => {
  receiver = await startCaptureServer(202);
});
afterAll(() => receiver.close());

describe("datadog", () => {
  it("posts to the LLM Observability spans intake of the site with DD-API-KEY; the body matches Datadog's schema", async () => {
    const [req, ...rest] = encoderFor("datadog").encode(batch(), configFor("datadog"));
    expect(rest).toHaveLength(0);
    expect(req!.url).toBe("https://api.us5.datadoghq.com/api/intake/llm-obs/v1/trace/spans");
    const { captured } = await receiver.send(req!);
    expect(captured.method).toBe("POST");
    expect(captured.headers["dd-api-key"]).toBe(planted("datadog", "apiKey"));
    const body = json(captured.body);
    const validate = ajv.compile(DATADOG_SPANS_REQUEST);
    expect(validate(body), ajv.errorsText(validate.errors)).toBe(true);
    const spans = body.data.attributes.spans;
    expect(body.data.attributes.ml_app).toBe("shop-bot");
    expect(spans).toHaveLength(4);
    const llm = spans[0];
    expect(llm).toMatchObject({
      parent_id: "undefined",
      name: "Summarise",
      status: "ok",
      session_id: "sess-555",
    });
    expect(llm.meta).toMatchObject({ kind: "llm", model_name: "openai/gpt-4o", model_provider: "openai" });
    expect(llm.metrics).toMatchObject({ input_tokens: 120, output_tokens: 45, total_tokens: 165 });
    expect(llm.start_ns).toBe(Date.UTC(2026, 10, 24, 6, 30, 15, 250) * 1e6);
    expect(llm.duration).toBe(1450e6);
    expect(spans[1]).toMatchObject({ parent_id: llm.span_id, status: "error", meta: { kind: "task" } });
  });

  it("maps app./bare site URLs to the api. intake host", () => {
    for (const [url, host] of [
      ["https://app.datadoghq.eu", "api.datadoghq.eu"],
      ["https://us3.datadoghq.com", "api.us3.datadoghq.com"],
      ["https://api.datadoghq.com", "api.datadoghq.com"],
    ] as const) {
      const cfg = validateConfig("datadog", { apiKey: "dd-key-1234", mlApp: "x", url });
      expect(new URL(encoderFor("datadog").testRequest(cfg).url).host).toBe(host);
    }
  });
});

describe("braintrust", () => {
  it("inserts project log events with ids derived from the generation and a span tree", async () => {
    const [req] = encoderFor("braintrust").encode(batch(), configFor("braintrust"));
    expect(req!.url).toBe("https://api.braintrust.dev/v1/project_logs/proj_123/insert");
    const { captured } = await receiver.send(req!);
    expect(captured.headers.authorization).toBe(`Bearer ${planted("braintrust", "apiKey")}`);
    const { events } = json(captured.body);
    expect(events).toHaveLength(4);
    const [llm, a1] = events;
    expect(llm).toMatchObject({
      id: "gen-1732420000-AbCdEf123456:generation",
      span_attributes: { name: "Summarise", type: "llm" },
      metrics: { prompt_tokens: 120, completion_tokens: 45, tokens: 165, start: 1795501815.25 },
    });
    expect(llm.root_span_id).toBe(llm.span_id);
    expect(a1.span_parents).toEqual([llm.span_id]);
    expect(a1.root_span_id).toBe(llm.span_id);
    expect(new Set(events.map((e: any) => e.id)).size).toBe(4);
  });
});

describe("posthog", () => {
  it("captures $ai_generation events through /batch/ with the project key in the body", async () => {
    const [req] = encoderFor("posthog").encode(batch(), configFor("posthog"));
    expect(req!.url).toBe("https://us.i.posthog.com/batch/");
    const { captured } = await receiver.send(req!);
    const body = json(captured.body);
    expect(body.api_key).toBe(planted("posthog", "apiKey"));
    expect(captured.headers.authorization).toBeUndefined();
    expect(body.batch).toHaveLength(2);
    const [e] = body.batch;
    expect(e.event).toBe("$ai_generation");
    expect(e.uuid).toMatch(UUID);
    expect(e.distinct_id).toBe("customer-99");
    expect(e.properties).toMatchObject({
      $ai_model: "openai/gpt-4o",
      $ai_provider: "openai",
      $ai_input_tokens: 120,
      $ai_output_tokens: 45,
      $ai_latency: 1.45,
      $ai_total_cost_usd: 0.000765,
      $ai_session_id: "sess-555",
      $ai_span_name: "Summarise",
      trace_name: "Checkout",
      metadata_env: "prod",
    });
    expect(e.properties.$ai_input).toBeDefined();
    expect(body.batch[1].properties.$process_person_profile).toBe(false);
  });

  it("privacy mode drops $ai_input and $ai_output_choices", () => {
    const [req] = encoderFor("posthog").encode([privateGeneration()], configFor("posthog"));
    const props = json(req!.body).batch[0].properties;
    expect(props).not.toHaveProperty("$ai_input");
    expect(props).not.toHaveProperty("$ai_output_choices");
    expect(props.$ai_input_tokens).toBe(120);
  });
});

describe("weave", () => {
  it("upserts start/end call pairs for entity/project with Basic api:<key>", async () => {
    const [req] = encoderFor("weave").encode(batch(), configFor("weave"));
    expect(req!.url).toBe("https://trace.wandb.ai/call/upsert_batch");
    const { captured } = await receiver.send(req!);
    expect(captured.headers.authorization).toBe(
      `Basic ${Buffer.from(`api:${planted("weave", "apiKey")}`).toString("base64")}`,
    );
    const items = json(captured.body).batch;
    expect(items).toHaveLength(8);
    const starts = items.filter((i: any) => i.mode === "start").map((i: any) => i.req.start);
    const ends = items.filter((i: any) => i.mode === "end").map((i: any) => i.req.end);
    expect(starts.map((s: any) => s.id)).toEqual(ends.map((e: any) => e.id));
    for (const s of starts) {
      expect(s.project_id).toBe("acme/shop");
      expect(s.id).toMatch(UUID_V7);
      expect(Object.keys(s).sort()).toEqual(
        expect.arrayContaining([
          "attributes",
          "id",
          "inputs",
          "op_name",
          "project_id",
          "started_at",
          "trace_id",
        ]),
      );
    }
    expect(starts[1].parent_id).toBe(starts[0].id);
    expect(ends[0].summary.usage["openai/gpt-4o"]).toMatchObject({
      prompt_tokens: 120,
      completion_tokens: 45,
    });
  });
});

describe("opik", () => {
  it("sends traces then spans with deterministic UUIDv7 ids, bare authorization and Comet-Workspace", async () => {
    const [traces, spans] = encoderFor("opik").encode(batch(), configFor("opik"));
    expect(traces!.url).toBe("https://www.comet.com/opik/api/v1/private/traces/batch");
    expect(spans!.url).toBe("https://www.comet.com/opik/api/v1/private/spans/batch");
    const t = await receiver.send(traces!);
    const s = await receiver.send(spans!);
    expect(t.captured.headers.authorization).toBe(planted("opik", "apiKey"));
    expect(t.captured.headers["comet-workspace"]).toBe("acme");
    const traceRows = json(t.captured.body).traces;
    const spanRows = json(s.captured.body).spans;
    expect(traceRows).toHaveLength(2);
    expect(spanRows).toHaveLength(4);
    for (const row of [...traceRows, ...spanRows]) expect(row.id).toMatch(UUID_V7);
    // UUIDv7's 48-bit prefix is the generation's start time.
    expect(parseInt(traceRows[0].id.replace(/-/g, "").slice(0, 12), 16)).toBe(sampleGeneration().createdAtMs);
    const traceIds = new Set(traceRows.map((r: any) => r.id));
    for (const row of spanRows) expect(traceIds.has(row.trace_id)).toBe(true);
    expect(spanRows[1].parent_span_id).toBe(spanRows[0].id);
    expect(traceRows[0].metadata).toMatchObject({ openrouter_observation_id: "gen-1732420000-AbCdEf123456" });
    expect(spanRows[0]).toMatchObject({ type: "llm", model: "openai/gpt-4o", usage: { prompt_tokens: 120 } });
  });
});

describe("clickhouse", () => {
  it("creates the table when missing and inserts JSONEachRow rows that ClickHouse itself accepts, once per token", async () => {
    const enc = encoderFor("clickhouse");
    const [create, insert] = enc.encode(batch(), configFor("clickhouse"));
    const { captured } = await receiver.send(insert!);
    expect(captured.headers.authorization).toBe(
      `Basic ${Buffer.from(`ingest:${planted("clickhouse", "password")}`).toString("base64")}`,
    );
    const url = new URL(insert!.url);
    expect(url.origin).toBe("https://ch.example.com:8443");
    const sql = url.searchParams.get("query")!;
    expect(sql).toBe("INSERT INTO `observability`.`OPENROUTER_TRACES` FORMAT JSONEachRow");
    const token = url.searchParams.get("insert_deduplication_token")!;
    expect(token).toMatch(/^[0-9a-f]{32}$/);

    // Run the same statements in ClickHouse (chDB). The HTTP interface turns URL parameters into
    // query settings; here they go into the SETTINGS clause.
    query("CREATE DATABASE IF NOT EXISTS observability");
    query(create!.body as string);
    query(create!.body as string); // idempotent
    const insertSql = `${sql.replace(" FORMAT", ` SETTINGS insert_deduplication_token='${token}', date_time_input_format='best_effort' FORMAT`)}\n${captured.body.toString()}`;
    query(insertSql);
    query(insertSql); // a retried batch
    const rows = query(
      "SELECT SPAN_TYPE, GENERATION_ID, TOTAL_TOKENS, TOTAL_COST, USER_ID, toUnixTimestamp64Milli(TIMESTAMP) AS MS FROM observability.OPENROUTER_TRACES ORDER BY GENERATION_ID, SPAN_TYPE, MS",
      "JSONEachRow",
    )
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(rows).toHaveLength(4);
    expect(rows[0]).toMatchObject({
      SPAN_TYPE: "GENERATION",
      GENERATION_ID: "gen-1732420000-AbCdEf123456",
      TOTAL_TOKENS: 165,
      TOTAL_COST: 0.000765,
      USER_ID: "customer-99",
    });
    expect(Number(rows[0].MS)).toBe(sampleGeneration().createdAtMs);
    expect(rows[3]).toMatchObject({ GENERATION_ID: "gen-2", USER_ID: null });
  });
  it("a text cut inside an emoji (a lone surrogate) does not make ClickHouse refuse the batch", () => {
    // The recorder keeps the first 1,024 UTF-16 units of `user`: one emoji across the cut leaves
    // half of it. JSON.stringify writes that half as "\ud83d", which JSONEachRow refuses
    // (CANNOT_PARSE_ESCAPE_SEQUENCE) for the whole insert; UTF-8 text has U+FFFD there.
    const user = `${"x".repeat(1023)}😀`.slice(0, 1024);
    const g = sampleGeneration({
      id: "gen-surrogate",
      identity: { ...sampleGeneration().identity!, externalUser: user },
      content: { input: [{ role: "user", content: "cut 😀".slice(0, 5) }], output: "ok" },
    });
    const config = validateConfig("clickhouse", { ...configFor("clickhouse"), table: "SURROGATE_TRACES" });
    const [create, insert] = encoderFor("clickhouse").encode([g, bareGeneration("gen-3", T0)], config);
    query("CREATE DATABASE IF NOT EXISTS observability");
    query(create!.body as string);
    const sql = new URL(insert!.url).searchParams.get("query")!;
    query(`${sql}\n${insert!.body as string}`);
    const rows = query(
      "SELECT GENERATION_ID, USER_ID, INPUT FROM observability.SURROGATE_TRACES WHERE SPAN_TYPE = 'GENERATION' ORDER BY GENERATION_ID",
      "JSONEachRow",
    )
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(rows.map((r) => r.GENERATION_ID)).toEqual(["gen-3", "gen-surrogate"]);
    expect(rows[1].USER_ID).toBe(`${"x".repeat(1023)}\uFFFD`);
    expect(JSON.parse(rows[1].INPUT)[0].content).toBe("cut \uFFFD");
  });
});

describe("snowflake", () => {
  it("posts bound INSERT statements to the SQL API with the PAT headers and a stable requestId", async () => {
    const enc = encoderFor("snowflake");
    const [create, insert] = enc.encode(batch(), configFor("snowflake"));
    const again = enc.encode(batch(), configFor("snowflake"))[1]!;
    const url = new URL(insert!.url);
    expect(`${url.origin}${url.pathname}`).toBe(
      "https://myorg-acct1.snowflakecomputing.com/api/v2/statements",
    );
    expect(url.searchParams.get("requestId")).toMatch(UUID);
    expect(url.searchParams.get("retry")).toBe("true");
    expect(again.url).toBe(insert!.url);
    const { captured } = await receiver.send(insert!);
    expect(captured.headers.authorization).toBe(`Bearer ${planted("snowflake", "token")}`);
    expect(captured.headers["x-snowflake-authorization-token-type"]).toBe("PROGRAMMATIC_ACCESS_TOKEN");
    const body = json(captured.body);
    expect(body).toMatchObject({
      database: "SNOWFLAKE_LEARNING_DB",
      schema: "PUBLIC",
      warehouse: "COMPUTE_WH",
    });
    expect(body.statement).toMatch(
      /^INSERT INTO "SNOWFLAKE_LEARNING_DB"\."PUBLIC"\."OPENROUTER_TRACES" \(TIMESTAMP, /,
    );
    const marks = (body.statement.match(/\?/g) ?? []).length;
    expect(Object.keys(body.bindings)).toHaveLength(marks);
    expect(marks).toBe(4 * 25);
    // Values are bound, never spliced into the SQL text.
    expect(body.statement).not.toContain("Summarise my basket");
    expect(
      Object.values(body.bindings).some((b: any) => String(b.value).includes("Summarise my basket")),
    ).toBe(true);
    // No null bindings: every value is TEXT, "" for null, converted by NULLIF/PARSE_JSON in the SELECT.
    expect(
      Object.values(body.bindings).every((b: any) => b.type === "TEXT" && typeof b.value === "string"),
    ).toBe(true);
    expect(body.statement).toContain("PARSE_JSON(NULLIF(column21, ''))");
    expect(json(create!.body).statement).toMatch(
      /^CREATE TABLE IF NOT EXISTS "SNOWFLAKE_LEARNING_DB"\."PUBLIC"\."OPENROUTER_TRACES" \(.*ATTRIBUTES VARIANT/,
    );
  });
});

describe("s3", () => {
  it("PUTs one object per trace at {pathTemplate}/{traceId}-{seconds}.json, SigV4-signed at send time (checked by aws4)", async () => {
    const config = configFor("s3");
    const enc = encoderFor("s3");
    const [unsigned] = enc.encode([sampleGeneration()], config);
    expect(unsigned!.method).toBe("PUT");
    expect(unsigned!.url).toBe(
      "https://trace-bucket.s3.eu-west-1.amazonaws.com/openrouter-traces/2026-11-24/gen-1732420000-AbCdEf123456-1795501815.json",
    );
    expect(unsigned!.headers.authorization).toBeUndefined();
    const now = new Date(Date.UTC(2026, 10, 24, 7, 5, 0));
    const signed = await requestToSend("s3", unsigned!, config, now);
    expect(signed.headers["x-amz-date"]).toBe("20261124T070500Z");
    expect(signed.headers["x-amz-security-token"]).toBe(planted("s3", "sessionToken"));

    // Independent check: aws4 recomputes the signature from the same request and time.
    expectAws4Signature(signed, config);
    const { captured } = await receiver.send(signed);
    expect(captured.method).toBe("PUT");
    const object = json(captured.body);
    expect(object).toMatchObject({
      id: "gen-1732420000-AbCdEf123456",
      name: "Checkout",
      userId: "customer-99",
    });
    expect(object.observations).toHaveLength(3);
    // The hosted original's S3 docs: custom `trace` keys are in each observation's `metadata`.
    for (const o of object.observations) expect(o.metadata).toEqual({ env: "prod" });
  });

  it("a prefix with characters encodeURIComponent leaves alone (! ' ( ) *) is percent-encoded in the path S3 signs", async () => {
    // S3 computes the canonical URI with every byte outside A-Z a-z 0-9 - _ . ~ encoded (aws4
    // models it the same way); a raw "(" in the request path signs a different string: 403.
    const config = validateConfig("s3", { ...configFor("s3"), prefix: "team's (prod)!*" });
    const [unsigned] = encoderFor("s3").encode([sampleGeneration()], config);
    const u = new URL(unsigned!.url);
    expect(u.pathname).toBe(
      "/team%27s%20%28prod%29%21%2A/2026-11-24/gen-1732420000-AbCdEf123456-1795501815.json",
    );
    for (const req of [unsigned!, encoderFor("s3").testRequest(config)]) {
      expectAws4Signature(await requestToSend("s3", req, config, new Date(T0)), config);
    }
  });

  it("a bucket name with a dot is addressed path style on AWS: the wildcard certificate covers one label", async () => {
    const config = validateConfig("s3", { ...configFor("s3"), bucketName: "traces.example.com" });
    const [req] = encoderFor("s3").encode([sampleGeneration()], config);
    const u = new URL(req!.url);
    // What Node's TLS client checks against S3's certificate for the region.
    const cert = {
      subject: { CN: "*.s3.eu-west-1.amazonaws.com" },
      subjectaltname: "DNS:s3.eu-west-1.amazonaws.com, DNS:*.s3.eu-west-1.amazonaws.com",
    } as unknown as PeerCertificate;
    expect(checkServerIdentity(u.hostname, cert)).toBeUndefined();
    expect(req!.url).toBe(
      "https://s3.eu-west-1.amazonaws.com/traces.example.com/openrouter-traces/2026-11-24/gen-1732420000-AbCdEf123456-1795501815.json",
    );
    // Names without a dot stay virtual-hosted.
    expect(new URL(encoderFor("s3").encode([sampleGeneration()], configFor("s3"))[0]!.url).hostname).toBe(
      "trace-bucket.s3.eu-west-1.amazonaws.com",
    );
    expectAws4Signature(await requestToSend("s3", req!, config, new Date(T0)), config);
  });

  it("custom endpoints use path style; template variables expand", async () => {
    const config = validateConfig("s3", {
      bucketName: "bkt",
      accessKeyId: "AKIDEXAMPLE",
      secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
      endpoint: "https://acct.r2.cloudflarestorage.com",
      pathTemplate: "{prefix}/{year}/{month}/{day}/{apiKeyName}",
    });
    const [req] = encoderFor("s3").encode([sampleGeneration()], config);
    expect(req!.url).toBe(
      "https://acct.r2.cloudflarestorage.com/bkt/openrouter-traces/2026/11/24/prod-backend/gen-1732420000-AbCdEf123456-1795501815.json",
    );
    expect(s3ObjectKey(bareGeneration("g/3", T0), config)).toBe(
      "openrouter-traces/2026/11/24/unknown/g_3-1795503600.json",
    );
    const signed = await requestToSend("s3", req!, config, new Date(T0));
    expect(signed.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20261124\/auto\/s3\/aws4_request, SignedHeaders=/,
    );
  });
});
