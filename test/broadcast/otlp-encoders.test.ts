import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encoderFor } from "../../src/broadcast/encoders/index.js";
import type { DestinationType } from "../../src/domain/destinations/destination-types.js";
import { startCaptureServer } from "../helpers/capture-server.js";
import { bareGeneration, privateGeneration, sampleGeneration } from "../helpers/broadcast-generations.js";
import { configFor, planted } from "../helpers/destination-configs.js";
import { decodeOtlpJson, spansOf } from "../helpers/otlp-proto.js";
import { LANGFUSE_GENERATION_ATTRIBUTES, NUMBER_MAP } from "./schemas/langfuse-otel-attributes.js";
import { Ajv } from "ajv";
import addFormatsModule from "ajv-formats";

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));

const basic = (user: string, pass: string): string =>
  `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}`;

/** Per OTLP type: the URL the product documents and the authentication it expects. */
const EXPECTED: Record<string, { method: string; url: string; headers: Record<string, string> }> = {
  "otel-collector": {
    method: "POST",
    url: "https://collector.example.com/v1/traces",
    headers: { authorization: `Bearer ${planted("otel-collector", "header")}`, "x-axiom-dataset": "llm" },
  },
  webhook: {
    method: "PUT",
    url: "https://hooks.example.com/otlp",
    headers: { "x-hook-token": planted("webhook", "header") },
  },
  grafana: {
    method: "POST",
    url: "https://otlp-gateway-prod-us-west-0.grafana.net/otlp/v1/traces",
    headers: { authorization: basic("123456", planted("grafana", "apiKey")) },
  },
  newrelic: {
    method: "POST",
    url: "https://otlp.eu01.nr-data.net/v1/traces",
    headers: { "api-key": planted("newrelic", "licenseKey") },
  },
  arize: {
    method: "POST",
    url: "https://otlp.arize.com/v1/traces",
    headers: { space_id: planted("arize", "spaceKey"), api_key: planted("arize", "apiKey") },
  },
  langsmith: {
    method: "POST",
    url: "https://api.smith.langchain.com/otel/v1/traces",
    headers: {
      "x-api-key": planted("langsmith", "apiKey"),
      "langsmith-project": "shop",
      "x-tenant-id": "ws-42",
    },
  },
  sentry: {
    method: "POST",
    url: "https://o123.ingest.us.sentry.io/api/4507/integration/otlp/v1/traces",
    headers: { "x-sentry-auth": `sentry sentry_key=${planted("sentry", "dsnkey")}` },
  },
  ramp: {
    method: "POST",
    url: "https://api.ramp.com/developer/v1/ai-usage/openrouter",
    headers: { authorization: `Bearer ${planted("ramp", "apiKey")}` },
  },
  langfuse: {
    method: "POST",
    url: "https://us.cloud.langfuse.com/api/public/otel/v1/traces",
    headers: {
      authorization: basic(planted("langfuse", "publicKey"), planted("langfuse", "secretKey")),
      "x-langfuse-ingestion-version": "4",
    },
  },
};

let receiver: Awaited<ReturnType<typeof startCaptureServer>>;
beforeAll(async () => {
  receiver = await startCaptureServer();
});
afterAll(() => receiver.close());

describe.each(Object.keys(EXPECTED) as DestinationType[])("OTLP destination %s", (type) => {
  const expected = EXPECTED[type]!;
  const encoder = encoderFor(type);
  const config = configFor(type);

  it("sends ExportTraceServiceRequest JSON to the documented endpoint with the documented auth", async () => {
    const requests = encoder.encode(
      [sampleGeneration(), bareGeneration("gen-2", Date.UTC(2026, 10, 24, 7))],
      config,
    );
    expect(requests).toHaveLength(1);
    const req = requests[0]!;
    expect(req.url).toBe(expected.url);
    const { status, captured } = await receiver.send(req);
    expect(status).toBe(200);
    expect(captured.method).toBe(expected.method);
    expect(captured.path).toBe(new URL(expected.url).pathname);
    expect(captured.headers["content-type"]).toBe("application/json");
    for (const [name, value] of Object.entries(expected.headers)) expect(captured.headers[name]).toBe(value);

    const decoded = decodeOtlpJson(captured.body);
    expect(decoded.roundTrip).toEqual(decoded.input);
    const spans = spansOf(decoded.message);
    // sample: generation + 2 attempts; bare: generation only (one attempt → no child span).
    expect(spans).toHaveLength(4);
    const [gen, a1, a2, bare] = spans;
    expect(gen!.resource).toMatchObject({
      "service.name": "openrouter",
      "openrouter.trace.id": "gen-1732420000-AbCdEf123456",
    });
    expect(gen!.span.name).toBe("Summarise");
    expect(gen!.span.kind).toBe(3); // SPAN_KIND_CLIENT
    expect(gen!.span.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(gen!.span.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(gen!.span.parentSpanId).toBeUndefined();
    expect(BigInt(gen!.span.endTimeUnixNano) - BigInt(gen!.span.startTimeUnixNano)).toBe(1_450_000_000n);
    expect(gen!.attrs).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.system": "openai",
      "gen_ai.request.model": "openai/gpt-4o",
      "gen_ai.response.id": "gen-1732420000-AbCdEf123456",
      "gen_ai.response.finish_reasons": ["stop"],
      "gen_ai.response.finish_reason": "stop",
      "gen_ai.usage.input_tokens": 120,
      "gen_ai.usage.output_tokens": 45,
      "gen_ai.usage.total_tokens": 165,
      "gen_ai.usage.cache_read.input_tokens": 20,
      "gen_ai.usage.reasoning.output_tokens": 5,
      "gen_ai.usage.total_cost": 0.000765,
      "gen_ai.request.temperature": 0.2,
      "gen_ai.request.max_tokens": 256,
      "gen_ai.conversation.id": "sess-555",
      "session.id": "sess-555",
      "user.id": "customer-99",
      "trace.name": "Checkout",
    });
    const prefix = type === "arize" ? "metadata." : "trace.metadata.";
    expect(gen!.attrs[`${prefix}env`]).toBe("prod");
    expect(gen!.attrs[`${prefix}openrouter.api_key_name`]).toBe("prod-backend");
    // Multimodal parts are stripped; text content goes.
    expect(String(gen!.attrs["gen_ai.prompt"])).toContain("Summarise my basket");
    expect(String(gen!.attrs["gen_ai.prompt"])).not.toContain("SECRETIMAGEBYTES");
    for (const attempt of [a1!, a2!]) {
      expect(attempt.span.parentSpanId).toBe(gen!.span.spanId);
      expect(attempt.span.traceId).toBe(gen!.span.traceId);
    }
    expect(a1!.span.name).toBe("provider attempt 1: Azure");
    expect(a1!.span.status?.code).toBe(2); // STATUS_CODE_ERROR
    expect(a1!.attrs["http.response.status_code"]).toBe(503);
    expect(bare!.span.name).toBe("anthropic/claude-sonnet-4");
    expect(bare!.span.traceId).not.toBe(gen!.span.traceId);
  });

  it("test connection: an empty OTLP payload with X-Test-Connection", async () => {
    const { captured } = await receiver.send(encoder.testRequest(config));
    expect(captured.headers["x-test-connection"]).toBe("true");
    expect(JSON.parse(captured.body.toString())).toEqual({ resourceSpans: [] });
    for (const [name, value] of Object.entries(expected.headers)) expect(captured.headers[name]).toBe(value);
  });
});

describe("OTLP specifics", () => {
  it("grouped generations share the client's trace id; parent_span_id and span_name nest spans", () => {
    const parent = "00f067aa0ba902b7";
    const g1 = sampleGeneration({
      id: "gen-a",
      trace: { trace_id: "conv-1", span_name: "agent step", parent_span_id: parent },
    });
    const g2 = sampleGeneration({ id: "gen-b", trace: { trace_id: "conv-1" } });
    const body = encoderFor("otel-collector").encode([g1, g2], configFor("otel-collector"))[0]!
      .body as string;
    const spans = spansOf(decodeOtlpJson(body).message);
    const wrapper = spans.find((s) => s.span.name === "agent step")!;
    const gen = spans.find((s) => s.attrs["gen_ai.response.id"] === "gen-a")!;
    expect(wrapper.span.parentSpanId).toBe(parent);
    expect(gen.span.parentSpanId).toBe(wrapper.span.spanId);
    expect(new Set(spans.map((s): string => String(s.span.traceId))).size).toBe(1);
  });

  it("a 32-hex client trace id is used as the OTLP trace id", () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const g = sampleGeneration({ trace: { trace_id: traceId } });
    const body = encoderFor("otel-collector").encode([g], configFor("otel-collector"))[0]!.body as string;
    expect(spansOf(decodeOtlpJson(body).message)[0]!.span.traceId).toBe(traceId);
  });

  it("New Relic: attribute values are cut at 4095 characters", () => {
    const long = "x".repeat(10_000);
    const g = sampleGeneration({ content: { input: [{ role: "user", content: long }], output: long } });
    const body = encoderFor("newrelic").encode([g], configFor("newrelic"))[0]!.body as string;
    const [gen] = spansOf(decodeOtlpJson(body).message);
    const lengths = Object.values(gen!.attrs)
      .filter((v) => typeof v === "string")
      .map((v) => v.length);
    expect(Math.max(...lengths)).toBe(4095);
  });

  it("Arize: the project is the resource attribute openinference.project.name = modelId", () => {
    const body = encoderFor("arize").encode([sampleGeneration()], configFor("arize"))[0]!.body as string;
    const [gen] = spansOf(decodeOtlpJson(body).message);
    expect(gen!.resource["openinference.project.name"]).toBe("shop-llm");
    expect(gen!.attrs).toMatchObject({ "openinference.span.kind": "LLM", "llm.token_count.prompt": 120 });
  });

  it("a batch larger than the body limit is split into several requests, none lost", () => {
    const big = "y".repeat(150_000);
    const batch = Array.from({ length: 8 }, (_, i) =>
      sampleGeneration({
        id: `gen-big-${i}`,
        content: { input: [{ role: "user", content: big }], output: big },
      }),
    );
    const requests = encoderFor("otel-collector").encode(batch, configFor("otel-collector"));
    expect(requests.length).toBeGreaterThan(1);
    for (const r of requests) expect(Buffer.byteLength(r.body as string)).toBeLessThanOrEqual(4_000_000);
    const ids = requests.flatMap((r) =>
      spansOf(decodeOtlpJson(r.body).message)
        .map((s) => s.attrs["gen_ai.response.id"])
        .filter((x) => x !== undefined),
    );
    expect(ids).toEqual(batch.map((g) => g.id));
  });

  it("webhook batches carry a deterministic webhook-id", () => {
    const enc = encoderFor("webhook");
    const a = enc.encode([sampleGeneration()], configFor("webhook"))[0]!;
    const b = enc.encode([sampleGeneration()], configFor("webhook"))[0]!;
    const c = enc.encode([privateGeneration({ id: "other" })], configFor("webhook"))[0]!;
    expect(a.headers["webhook-id"]).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(b.headers["webhook-id"]).toBe(a.headers["webhook-id"]);
    expect(c.headers["webhook-id"]).not.toBe(a.headers["webhook-id"]);
  });
});

describe("Langfuse (OTLP endpoint)", () => {
  it("the generation span carries Langfuse's documented langfuse.* directives with valid values", () => {
    const body = encoderFor("langfuse").encode([sampleGeneration()], configFor("langfuse"))[0]!.body;
    const decoded = decodeOtlpJson(body);
    expect(decoded.roundTrip).toEqual(decoded.input);
    const [gen, attempt] = spansOf(decoded.message);
    const validate = ajv.compile(LANGFUSE_GENERATION_ATTRIBUTES);
    expect(validate(gen!.attrs), ajv.errorsText(validate.errors)).toBe(true);
    expect(gen!.attrs["langfuse.observation.type"]).toBe("generation");
    const numbers = ajv.compile(NUMBER_MAP);
    const usage = JSON.parse(String(gen!.attrs["langfuse.observation.usage_details"]));
    const cost = JSON.parse(String(gen!.attrs["langfuse.observation.cost_details"]));
    expect(numbers(usage) && numbers(cost)).toBe(true);
    expect(usage).toMatchObject({ input: 120, output: 45, total: 165 });
    expect(cost).toEqual({ input: 0.0003, output: 0.000465, total: 0.000765 });
    expect(attempt!.attrs["langfuse.observation.type"]).toBe("span");
    expect(attempt!.attrs["langfuse.observation.level"]).toBe("ERROR");
  });
});
