import {
  CreateObservabilityDestinationResponse$inboundSchema,
  GetObservabilityDestinationResponse$inboundSchema,
  ListObservabilityDestinationsResponse$inboundSchema,
  UpdateObservabilityDestinationResponse$inboundSchema,
} from "@openrouter/sdk/models";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DESTINATION_TYPE_NAMES } from "../../src/domain/destinations/destination-types.js";
import { makeTestApp, type TestApp } from "../helpers/app.js";
import { createBody } from "../http/destinations-fixtures.js";

const COMMON_FIELDS = [
  "api_key_hashes",
  "broadcast_generation_cost",
  "broadcast_generation_identity",
  "broadcast_generation_request_context",
  "config",
  "created_at",
  "enabled",
  "filter_rules",
  "id",
  "name",
  "privacy_mode",
  "regions",
  "sampling_rate",
  "type",
  "updated_at",
  "workspace_id",
];

/** The SDK never throws on a bad destination: it silently returns UNKNOWN. Assert it does not. */
function expectKnown(parsed: unknown, type: string): void {
  const d = parsed as { type: string; isUnknown?: boolean; raw?: unknown };
  expect(d.isUnknown, `SDK parsed ${type} as UNKNOWN`).toBeUndefined();
  expect(d.type).toBe(type);
}

describe("destination responses parse with the SDK's own inbound schemas", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp();
  });
  afterAll(() => t.close());

  it.each(DESTINATION_TYPE_NAMES)("%s: create, get, update and list are known variants", async (type) => {
    const filter_rules = { groups: [{ rules: [{ field: "model", operator: "equals", value: "x/y" }] }] };
    const created = await t.call({
      method: "POST",
      url: "/api/v1/observability/destinations",
      payload: createBody(type, { filter_rules, regions: ["eu", "us"] }),
    });
    expect(created.statusCode).toBe(201);
    const body = created.json();
    expect(Object.keys(body.data).sort()).toEqual(COMMON_FIELDS);
    expectKnown(CreateObservabilityDestinationResponse$inboundSchema.parse(body).data, type);

    const url = `/api/v1/observability/destinations/${body.data.id}`;
    const got = await t.call({ method: "GET", url });
    expectKnown(GetObservabilityDestinationResponse$inboundSchema.parse(got.json()).data, type);

    const patched = await t.call({
      method: "PATCH",
      url,
      payload: { name: "renamed", api_key_hashes: null },
    });
    expect(patched.statusCode).toBe(200);
    expectKnown(UpdateObservabilityDestinationResponse$inboundSchema.parse(patched.json()).data, type);
  });

  it("the detector works: a record without regions is UNKNOWN to the SDK", async () => {
    const res = await t.call({ method: "GET", url: "/api/v1/observability/destinations?limit=1" });
    const { regions: _dropped, ...broken } = res.json().data[0];
    const parsed = GetObservabilityDestinationResponse$inboundSchema.parse({ data: broken });
    expect((parsed.data as { isUnknown?: boolean }).isUnknown).toBe(true);
  });

  it("the list response parses and no element is UNKNOWN", async () => {
    const res = await t.call({ method: "GET", url: "/api/v1/observability/destinations?limit=100" });
    const parsed = ListObservabilityDestinationsResponse$inboundSchema.parse(res.json());
    expect(parsed.totalCount).toBe(DESTINATION_TYPE_NAMES.length);
    expect(parsed.data).toHaveLength(DESTINATION_TYPE_NAMES.length);
    for (const d of parsed.data) expect((d as { isUnknown?: boolean }).isUnknown).toBeUndefined();
  });
});
