import type { OpenRouter } from "@openrouter/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startListening, type ListeningApp } from "../helpers/server.js";

/**
 * Edge cases of the data plane's read routes and /byok through @openrouter/sdk 1.3.19 against a
 * real listening server (retries off): identifiers no record can have must answer a status the
 * operation maps (404), not one the SDK only knows as OpenRouterDefaultError.
 */
describe("SDK 1.3.19: identifiers that name nothing", () => {
  let s: ListeningApp;
  let admin: OpenRouter;

  beforeAll(async () => {
    s = await startListening();
    admin = s.sdk();
  });
  afterAll(() => s.close());

  it("byok.get, update and delete with an empty id: 404 NotFoundResponseError (get and delete map no 400)", async () => {
    const notFound = { name: "NotFoundResponseError", statusCode: 404 };
    await expect(admin.byok.get({ id: "" })).rejects.toMatchObject(notFound);
    await expect(admin.byok.delete({ id: "" })).rejects.toMatchObject(notFound);
    await expect(admin.byok.update({ id: "", updateBYOKKeyRequest: { name: "x" } })).rejects.toMatchObject(
      notFound,
    );
  });

  it("generations.getGeneration with an empty or overlong id: 404 NotFoundResponseError (no 400 is mapped)", async () => {
    const notFound = { name: "NotFoundResponseError", statusCode: 404, message: "Generation not found" };
    await expect(admin.generations.getGeneration({ id: "" })).rejects.toMatchObject(notFound);
    await expect(admin.generations.getGeneration({ id: "g".repeat(129) })).rejects.toMatchObject(notFound);
    await expect(admin.generations.getGeneration({ id: "g".repeat(128) })).rejects.toMatchObject(notFound);
  });
});
