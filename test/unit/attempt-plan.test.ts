import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { DomainError } from "../../src/domain/errors.js";
import { buildCatalog, closeCatalog } from "../../src/gateway/catalog/build-catalog.js";
import { buildFileProviders } from "../../src/gateway/catalog/load-providers-file.js";
import { parseProvidersFile } from "../../src/gateway/catalog/providers-file.js";
import { planAttempts } from "../../src/gateway/chat/attempts.js";

/**
 * A request naming one model without provider preferences gets a plan made once per model
 * (planAttempts): the same attempts, in the same order, as the general plan, and a list of its own.
 */

const model = (id: string, provider: string, upstream: string) => ({
  id,
  provider,
  upstream_model: upstream,
  prompt_price: 0.000001,
  completion_price: 0.000002,
  context_length: 8192,
  max_completion_tokens: 1024,
});
const file = {
  providers: ["alpha", "beta", "gamma"].map((slug) => ({
    slug,
    kind: "openai-compatible",
    base_url: "http://127.0.0.1:9/v1",
  })),
  models: [
    model("acme/chat", "beta", "chat-b"),
    model("acme/chat", "alpha", "chat-a"),
    model("acme/chat", "gamma", "chat-g"),
    model("acme/other", "gamma", "other"),
    {
      id: "acme/embed",
      kind: "embedding",
      provider: "alpha",
      upstream_model: "embed",
      prompt_price: 0.00000002,
      context_length: 8192,
    },
  ],
};
const catalog = buildCatalog(
  loadConfig({}).gateway,
  buildFileProviders(parseProvidersFile(JSON.stringify(file), {})),
);
afterAll(() => closeCatalog(catalog));

const route = (attempts: ReturnType<typeof planAttempts>) =>
  attempts.map((a) => `${a.model.id}@${a.provider.slug}:${a.endpoint.upstreamModel}`);

describe("the plan of a request naming one model without preferences", () => {
  it("is the general plan's, every time", () => {
    for (const id of ["acme/chat", "acme/other", "mock/echo"]) {
      // An empty preferences object takes the general path and asks for nothing more.
      const general = route(planAttempts(catalog, id, undefined, {}));
      expect(general.length).toBeGreaterThan(0);
      expect(route(planAttempts(catalog, id, undefined, null))).toEqual(general);
      expect(route(planAttempts(catalog, id, [], undefined))).toEqual(general);
    }
    expect(route(planAttempts(catalog, "acme/chat", undefined, null))).toEqual([
      "acme/chat@beta:chat-b",
      "acme/chat@alpha:chat-a",
      "acme/chat@gamma:chat-g",
    ]);
  });

  it("is a list of the caller's own: changing it changes no later plan", () => {
    const first = planAttempts(catalog, "acme/chat", undefined, null);
    first.splice(0, first.length);
    expect(route(planAttempts(catalog, "acme/chat", undefined, null))).toHaveLength(3);
  });

  it("still refuses an unknown model, and a model of the other kind, naming the field", () => {
    for (let i = 0; i < 2; i++) {
      expect(() => planAttempts(catalog, "acme/nope", undefined, null)).toThrow(
        /^model: acme\/nope is not a model this gateway serves/,
      );
      expect(() => planAttempts(catalog, "acme/embed", undefined, null)).toThrow(DomainError);
      expect(route(planAttempts(catalog, "acme/embed", undefined, null, [], "embedding"))).toEqual([
        "acme/embed@alpha:embed",
      ]);
    }
  });

  it("leaves preferences and model lists to the general plan", () => {
    expect(route(planAttempts(catalog, "acme/chat", undefined, { order: ["gamma"] }))[0]).toBe(
      "acme/chat@gamma:chat-g",
    );
    expect(route(planAttempts(catalog, "acme/chat", ["acme/other"], null))).toEqual([
      "acme/chat@beta:chat-b",
      "acme/chat@alpha:chat-a",
      "acme/chat@gamma:chat-g",
      "acme/other@gamma:other",
    ]);
  });
});
