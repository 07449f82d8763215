import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import {
  DESTINATION_TYPE_NAMES,
  DESTINATION_TYPES,
  type DestinationType,
} from "../../src/domain/destinations/destination-types.js";
import { mergeConfig } from "../../src/domain/destinations/merge-config.js";
import { maskConfig } from "../../src/domain/destinations/mask.js";
import { validateConfig } from "../../src/domain/destinations/validate-config.js";
import { normalizeFilterRules } from "../../src/domain/destinations/filter-rules.js";
import { normalizeRegions } from "../../src/domain/destinations/regions.js";
import { SAMPLE_CONFIGS } from "../http/destinations-fixtures.js";

const message = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(DomainError);
    expect((e as DomainError).status).toBe(400);
    return (e as DomainError).message;
  }
  throw new Error("expected a 400");
};

describe("the registry", () => {
  it("has the 17 types of SDK 1.3.19", () => {
    expect([...DESTINATION_TYPE_NAMES].sort()).toEqual(
      [
        "arize",
        "braintrust",
        "clickhouse",
        "datadog",
        "grafana",
        "langfuse",
        "langsmith",
        "newrelic",
        "opik",
        "otel-collector",
        "posthog",
        "ramp",
        "s3",
        "sentry",
        "snowflake",
        "weave",
        "webhook",
      ].sort(),
    );
  });

  it("no field is both required and defaulted", () => {
    for (const fields of Object.values(DESTINATION_TYPES)) {
      for (const f of fields) expect(f.required && "default" in f).toBe(false);
    }
  });
});

describe("validateConfig, generated from the registry", () => {
  it.each(DESTINATION_TYPE_NAMES)("%s: the sample is valid; defaults are filled in", (type) => {
    const out = validateConfig(type, SAMPLE_CONFIGS[type]);
    for (const f of DESTINATION_TYPES[type]) {
      const given = SAMPLE_CONFIGS[type][f.name];
      if (given !== undefined) expect(out[f.name]).toBe(given);
      else if ("default" in f) expect(out[f.name]).toBe(f.default);
      else expect(out).not.toHaveProperty(f.name);
    }
  });

  it.each(DESTINATION_TYPE_NAMES)(
    "%s: every required field missing, null or empty is 400 naming it",
    (type) => {
      for (const f of DESTINATION_TYPES[type].filter((x) => x.required)) {
        for (const bad of [undefined, null, ""]) {
          const config: Record<string, unknown> = { ...SAMPLE_CONFIGS[type], [f.name]: bad };
          expect(message(() => validateConfig(type, config))).toBe(`config.${f.name}: is required`);
        }
        expect(message(() => validateConfig(type, { ...SAMPLE_CONFIGS[type], [f.name]: 12 }))).toBe(
          `config.${f.name}: must be string`,
        );
      }
    },
  );

  it.each(DESTINATION_TYPE_NAMES)("%s: every URL field rejects a non-http(s) URL", (type) => {
    for (const f of DESTINATION_TYPES[type].filter((x) => x.check.kind === "url")) {
      for (const bad of ["not a url", "ftp://files.example.com", "/relative/path", "javascript:alert(1)"]) {
        expect(message(() => validateConfig(type, { ...SAMPLE_CONFIGS[type], [f.name]: bad }))).toBe(
          `config.${f.name}: must be an absolute http(s) URL`,
        );
      }
    }
  });

  it.each(DESTINATION_TYPE_NAMES)("%s: a non-empty secret shorter than 4 characters is 400", (type) => {
    for (const f of DESTINATION_TYPES[type].filter((x) => x.secret && x.check.kind === "string")) {
      expect(message(() => validateConfig(type, { ...SAMPLE_CONFIGS[type], [f.name]: "abc" }))).toBe(
        `config.${f.name}: at least 4 characters`,
      );
    }
  });

  it("enums, the Sentry DSN and the Snowflake account pattern", () => {
    expect(message(() => validateConfig("newrelic", { licenseKey: "abcd1234", region: "asia" }))).toBe(
      "config.region: must be one of us, eu",
    );
    expect(message(() => validateConfig("webhook", { url: "https://x.example", method: "GET" }))).toBe(
      "config.method: must be one of POST, PUT",
    );
    expect(
      message(() =>
        validateConfig("sentry", { dsn: "https://sentry.io/123", otlpEndpoint: "https://x.example" }),
      ),
    ).toMatch(/^config\.dsn: must be a Sentry DSN/);
    expect(
      validateConfig("sentry", {
        dsn: "https://k:s@o1.ingest.sentry.io/path/42/",
        otlpEndpoint: "https://x.io",
      }).dsn,
    ).toBe("https://k:s@o1.ingest.sentry.io/path/42/");
    expect(message(() => validateConfig("snowflake", { account: "bad account!", token: "tokn" }))).toMatch(
      /^config\.account: must be a Snowflake account identifier/,
    );
    expect(message(() => validateConfig("snowflake", { account: "a".repeat(256), token: "tokn" }))).toBe(
      "config.account: at most 255 characters",
    );
    expect(validateConfig("snowflake", { account: "org-acct.eu_west", token: "tokn" }).account).toBe(
      "org-acct.eu_west",
    );
  });

  it("blank required values are refused; empty optional values are unset and take defaults", () => {
    expect(message(() => validateConfig("opik", { apiKey: "abcd", projectName: "  ", workspace: "w" }))).toBe(
      "config.projectName: must not be blank",
    );
    const s3 = validateConfig("s3", { ...SAMPLE_CONFIGS.s3, sessionToken: "", prefix: "" });
    expect(s3).not.toHaveProperty("sessionToken");
    expect(s3.prefix).toBe("openrouter-traces");
  });

  it("drops unknown keys and validates headers", () => {
    const out = validateConfig("posthog", { apiKey: "phc_1234", nope: "x", headers: { "X-A": "1" } });
    expect(out).toEqual({
      apiKey: "phc_1234",
      endpoint: "https://us.i.posthog.com",
      headers: { "X-A": "1" },
    });
    expect(message(() => validateConfig("posthog", { apiKey: "phc_1234", headers: ["x"] }))).toBe(
      "config.headers: must be object",
    );
    expect(message(() => validateConfig("posthog", { apiKey: "phc_1234", headers: { "X-A": 1 } }))).toBe(
      "config.headers.X-A: must be string",
    );
    expect(
      message(() => validateConfig("posthog", { apiKey: "phc_1234", headers: { "Bad Name": "v" } })),
    ).toBe("config.headers.Bad Name: is not a valid HTTP header name");
    expect(
      message(() => validateConfig("posthog", { apiKey: "phc_1234", headers: { "X-A": "v\r\nX-B: 1" } })),
    ).toBe("config.headers.X-A: must not contain control characters");
  });
});

describe("mergeConfig (PATCH)", () => {
  const stored = validateConfig("langfuse", {
    publicKey: "pk-lf-0123456789abEfGh",
    secretKey: "sk-lf-0123456789abAbCd",
    headers: { Authorization: "Bearer 0123456789abcdef" },
  });
  const masked = maskConfig("langfuse", stored);

  it("echoing the whole masked config changes nothing", () => {
    expect(mergeConfig("langfuse", stored, masked)).toEqual(stored);
  });

  it("only sent fields change; a new secret replaces the old one", () => {
    const out = mergeConfig("langfuse", stored, { secretKey: "sk-lf-new-secret-value" });
    expect(out).toEqual({ ...stored, secretKey: "sk-lf-new-secret-value" });
  });

  it("null on an optional field restores its default; on a required field it is 400", () => {
    const custom = { ...stored, baseUrl: "https://eu.cloud.langfuse.com" };
    expect(mergeConfig("langfuse", custom, { baseUrl: null }).baseUrl).toBe("https://us.cloud.langfuse.com");
    expect(message(() => mergeConfig("langfuse", stored, { secretKey: null }))).toBe(
      "config.secretKey: is required",
    );
  });

  it("headers are replaced as a whole; a masked header value keeps the stored one", () => {
    const out = mergeConfig("langfuse", stored, {
      headers: {
        Authorization: masked.headers && (masked.headers as Record<string, string>).Authorization,
        "X-New": "v",
      },
    });
    expect(out.headers).toEqual({ Authorization: "Bearer 0123456789abcdef", "X-New": "v" });
    expect(mergeConfig("langfuse", stored, { headers: null })).not.toHaveProperty("headers");
  });

  it("the merged result is validated again", () => {
    expect(message(() => mergeConfig("langfuse", stored, { baseUrl: "nope" }))).toBe(
      "config.baseUrl: must be an absolute http(s) URL",
    );
  });

  it.each(DESTINATION_TYPE_NAMES)(
    "%s: echoing the masked config keeps every stored value",
    (type: DestinationType) => {
      const s = validateConfig(type, SAMPLE_CONFIGS[type]);
      expect(mergeConfig(type, s, maskConfig(type, s))).toEqual(s);
    },
  );
});

describe("filter rules and regions", () => {
  it("fills defaults and drops the value of exists/not_exists", () => {
    expect(
      normalizeFilterRules({ groups: [{ rules: [{ field: "user_id", operator: "exists", value: "x" }] }] }),
    ).toEqual({
      enabled: true,
      groups: [{ logic: "and", rules: [{ field: "user_id", operator: "exists" }] }],
    });
  });

  it("requires a value of the right kind for the other operators", () => {
    const rules = (operator: string, value?: unknown) => ({
      groups: [{ rules: [{ field: "total_cost", operator, value }] }],
    });
    const path = "filter_rules.groups[0].rules[0].value";
    expect(message(() => normalizeFilterRules(rules("equals") as never))).toBe(
      `${path}: is required for operator equals`,
    );
    expect(message(() => normalizeFilterRules(rules("gt", "1") as never))).toBe(
      `${path}: must be number for operator gt`,
    );
    expect(message(() => normalizeFilterRules(rules("contains", 1) as never))).toBe(
      `${path}: must be string for operator contains`,
    );
    expect(message(() => normalizeFilterRules(rules("regex", "(") as never))).toMatch(
      `${path}: is not a valid regular expression (RE2 syntax, without lookaround or backreferences): `,
    );
    // What a backtracking engine takes and RE2 does not: lookaround, backreferences.
    for (const pattern of ["(?=gpt)gpt-4o", "(a)\\1", "(?<!x)y"]) {
      expect(message(() => normalizeFilterRules(rules("regex", pattern) as never))).toMatch(
        /is not a valid regular expression \(RE2 syntax/,
      );
    }
    for (const pattern of ["^openai/", "(?i)GPT|claude", "[0-9]+\\.[0-9]+", "(a+)+$"]) {
      expect(normalizeFilterRules(rules("regex", pattern) as never).groups[0]!.rules[0]!.value).toBe(pattern);
    }
    expect(normalizeFilterRules(rules("gte", 0.5) as never).groups[0]!.rules[0]!.value).toBe(0.5);
  });

  it("regions: eu is europe, duplicates collapse", () => {
    expect(normalizeRegions(["eu", "europe", "us"])).toEqual(["europe", "us"]);
    expect(message(() => normalizeRegions([]))).toBe("regions: at least 1 item");
  });
});
