import * as errors from "@openrouter/sdk/models/errors";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DESTINATION_TYPE_NAMES } from "../../src/domain/destinations/destination-types.js";
import { startListening, type ListeningApp } from "../helpers/server.js";
import { SAMPLE_CONFIGS } from "./destinations-fixtures.js";

const known = (d: unknown): boolean => (d as { isUnknown?: boolean }).isUnknown !== true;

/** Every destination operation through the official SDK 1.3.19 over a real socket. */
describe("observability destinations through @openrouter/sdk", () => {
  let s: ListeningApp;
  beforeAll(async () => {
    s = await startListening();
  });
  afterAll(() => s.close());

  it("creates every type; create, get, update, list and delete parse as known variants", async () => {
    const sdk = s.sdk();
    const ids: string[] = [];
    for (const type of DESTINATION_TYPE_NAMES) {
      const created = await sdk.observability.create({
        createObservabilityDestinationRequest: {
          name: `${type} via SDK`,
          type,
          config: SAMPLE_CONFIGS[type],
          regions: ["eu"],
          filterRules: { groups: [{ rules: [{ field: "model", operator: "exists" }] }] },
        },
      });
      expect(known(created.data), type).toBe(true);
      expect(created.data).toMatchObject({ type, enabled: true, samplingRate: 1, regions: ["europe"] });
      ids.push((created.data as { id: string }).id);
    }

    const got = await sdk.observability.get({ id: ids[5]! });
    expect(known(got.data)).toBe(true);
    expect(got.data).toMatchObject({ type: "langfuse", config: { secretKey: "sk-l...AbCd" } });

    const updated = await sdk.observability.update({
      id: ids[5]!,
      updateObservabilityDestinationRequest: {
        name: "renamed",
        config: (got.data as { config: Record<string, unknown> }).config,
        privacyMode: true,
      },
    });
    expect(known(updated.data)).toBe(true);
    expect(updated.data).toMatchObject({
      name: "renamed",
      privacyMode: true,
      config: { secretKey: "sk-l...AbCd" },
    });

    const seen: string[] = [];
    const pages = await sdk.observability.list({ limit: 5 });
    for await (const page of pages) {
      expect(page.result.totalCount).toBe(DESTINATION_TYPE_NAMES.length);
      for (const d of page.result.data) {
        expect(known(d)).toBe(true);
        seen.push((d as { id: string }).id);
      }
    }
    expect(seen.sort()).toEqual([...ids].sort());

    const deleted = await sdk.observability.delete({ id: ids[0]! });
    expect(deleted.deleted).toBe(true);
  });

  it("maps 400, 404 and 409 to the SDK's error classes", async () => {
    const sdk = s.sdk();
    await expect(
      sdk.observability.create({
        createObservabilityDestinationRequest: {
          name: "x",
          type: "langfuse",
          config: { publicKey: "pk-lf-12345" },
        },
      }),
    ).rejects.toBeInstanceOf(errors.BadRequestResponseError);
    await expect(
      sdk.observability.get({ id: "00000000-0000-4000-8000-000000000000" }),
    ).rejects.toBeInstanceOf(errors.NotFoundResponseError);
    // ramp already has one from the first test (or none when run alone): fill it to 5, then one more.
    const existing = (await sdk.observability.list({ limit: 100 })).result.data.filter(
      (d) => (d as { type: string }).type === "ramp",
    ).length;
    for (let i = existing; i < 5; i++) {
      await sdk.observability.create({
        createObservabilityDestinationRequest: {
          name: `ramp ${i}`,
          type: "ramp",
          config: SAMPLE_CONFIGS.ramp,
        },
      });
    }
    await expect(
      sdk.observability.create({
        createObservabilityDestinationRequest: { name: "sixth", type: "ramp", config: SAMPLE_CONFIGS.ramp },
      }),
    ).rejects.toBeInstanceOf(errors.ConflictResponseError);
  });
});
