import { describe, expect, it } from "vitest";
import type { BroadcastGeneration, EncodedRequest } from "../../src/broadcast/encoders/index.js";
import { encoderFor, requestToSend } from "../../src/broadcast/encoders/index.js";
import {
  DESTINATION_TYPE_NAMES,
  type DestinationType,
} from "../../src/domain/destinations/destination-types.js";
import { privateGeneration, sampleGeneration } from "../helpers/broadcast-generations.js";
import { configFor, secretsOf } from "../helpers/destination-configs.js";

/**
 * Secrets never leak into payloads, privacy mode sends no content, and encoding is deterministic,
 * for every destination type. Strings are planted in every config's secret fields and headers,
 * and in fields smuggled onto the generation object (a BYOK key, the caller's API key): an
 * encoder that spread an object instead of picking allowlisted fields would carry them out.
 */
const GENERATION_PLANTS = [
  "PLANTEDGEN_api_key_sk-or-v1-9c1f",
  "PLANTEDGEN_byok_sk-ant-77e2",
  "PLANTEDGEN_nested_4d0b",
];

function leakyGeneration(base: BroadcastGeneration): BroadcastGeneration {
  return {
    ...base,
    apiKey: GENERATION_PLANTS[0],
    byokCredential: GENERATION_PLANTS[1],
    identity: base.identity && { ...base.identity, apiKey: GENERATION_PLANTS[0] },
    cost: base.cost && { ...base.cost, byokKey: GENERATION_PLANTS[1] },
    requestContext: base.requestContext && { ...base.requestContext, authorization: GENERATION_PLANTS[2] },
    attempts: base.attempts.map((a) => ({ ...a, providerKey: GENERATION_PLANTS[1] })),
  } as BroadcastGeneration;
}

const bodyText = (r: EncodedRequest): string =>
  typeof r.body === "string" ? r.body : Buffer.from(r.body).toString("utf8");

/** Header values as sent, plus the decoded credentials of Basic authorization. */
function headerTexts(r: EncodedRequest): string[] {
  return Object.values(r.headers).flatMap((v) => {
    const basic = /^Basic (.+)$/.exec(v);
    return basic ? [v, Buffer.from(basic[1]!, "base64").toString("utf8")] : [v];
  });
}

async function allRequests(type: DestinationType, batch: BroadcastGeneration[]): Promise<EncodedRequest[]> {
  const encoder = encoderFor(type);
  const config = configFor(type);
  const encoded = [...encoder.encode(batch, config), encoder.testRequest(config)];
  const now = new Date(Date.UTC(2026, 10, 24, 8));
  return Promise.all(encoded.map((r) => requestToSend(type, r, config, now)));
}

/** Where a type's own credential is documented to travel in the body (PostHog's project key). */
const OWN_SECRET_IN_BODY: Partial<Record<DestinationType, string>> = { posthog: "apiKey" };

describe.each(DESTINATION_TYPE_NAMES)("%s", (type) => {
  it("no secret of any destination, and no smuggled credential, appears where it must not", async () => {
    const requests = await allRequests(type, [
      leakyGeneration(sampleGeneration()),
      leakyGeneration(privateGeneration({ id: "gen-p" })),
    ]);
    expect(requests.length).toBeGreaterThan(1);
    const own = secretsOf(type);
    const others = DESTINATION_TYPE_NAMES.filter((t) => t !== type).flatMap(secretsOf);
    const ownInBody = OWN_SECRET_IN_BODY[type] ? [configFor(type)[OWN_SECRET_IN_BODY[type]] as string] : [];
    for (const r of requests) {
      const body = bodyText(r);
      const headers = headerTexts(r).join("\n");
      for (const s of [...others, ...GENERATION_PLANTS]) {
        expect(body).not.toContain(s);
        expect(headers).not.toContain(s);
      }
      for (const s of own) if (!ownInBody.includes(s)) expect(body).not.toContain(s);
      expect(r.url).not.toMatch(/PLANTED/);
    }
    // The type's own credential does travel, in its authentication (or for PostHog, the body).
    const everything = requests.map((r) => headerTexts(r).join("\n") + bodyText(r)).join("\n");
    const ownParts = own.map((s) => (type === "sentry" ? /PLANTED_sentry_dsnkey_7f3a/.exec(s)![0] : s));
    expect(ownParts.some((s) => everything.includes(s)) || type === "s3").toBe(true);
  });

  it("privacy mode: no prompt or completion text in any request", async () => {
    const requests = await allRequests(type, [privateGeneration(), privateGeneration({ id: "gen-2" })]);
    for (const r of requests) {
      const text = bodyText(r) + JSON.stringify(r.headers) + r.url;
      for (const content of ["You are terse", "Summarise my basket", "Two apples", "SECRETIMAGEBYTES"]) {
        expect(text).not.toContain(content);
      }
    }
    // ...while the same generation with content does carry it, so the check above can fail.
    const withContent = (await allRequests(type, [sampleGeneration()])).map(bodyText).join("\n");
    expect(withContent).toContain("Summarise my basket");
    expect(withContent).not.toContain("SECRETIMAGEBYTES");
  });

  it("encoding twice gives identical bytes (and identical signatures at the same time)", async () => {
    const batch = [sampleGeneration(), privateGeneration({ id: "gen-2", trace: null })];
    const a = await allRequests(type, batch);
    const b = await allRequests(type, structuredClone(batch));
    expect(b).toEqual(a);
    expect(a.map(bodyText)).toEqual(b.map(bodyText));
  });

  it("an empty batch sends nothing; maxBatch is a positive limit", () => {
    const encoder = encoderFor(type);
    expect(encoder.encode([], configFor(type))).toEqual([]);
    expect(encoder.maxBatch).toBeGreaterThan(0);
  });
});
