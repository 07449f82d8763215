import { describe, expect, it } from "vitest";
import { DomainError } from "../../../src/domain/errors.js";
import {
  MAX_EMBEDDING_INPUTS,
  MAX_TEXT_UNITS,
  MAX_TOKEN_IDS,
  embeddingsRequest,
} from "../../../src/gateway/surfaces/embeddings/embeddings-request.js";

/** POST /embeddings' body: every input form the SDK sends, and a 400 naming the field otherwise. */

const body = (extra: Record<string, unknown>) => ({ model: "mock/embed", input: "hello", ...extra });

function refusal(b: unknown): string {
  try {
    embeddingsRequest(b);
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).status).toBe(400);
    expect((err as DomainError).code).toBe("invalid_request");
    return (err as DomainError).message;
  }
  throw new Error("expected a 400");
}

describe("embeddingsRequest: input forms", () => {
  it("a string is one text; a list of strings one text each", () => {
    expect(embeddingsRequest(body({ input: "hello" })).input).toEqual(["hello"]);
    expect(embeddingsRequest(body({ input: ["a", "b", "c"] })).input).toEqual(["a", "b", "c"]);
  });

  it("a list of token ids is one input; a list of such lists one each", () => {
    expect(embeddingsRequest(body({ input: [1, 2, 3] })).input).toEqual([[1, 2, 3]]);
    expect(embeddingsRequest(body({ input: [[1, 2], [3], [0, 2_147_483_647]] })).input).toEqual([
      [1, 2],
      [3],
      [0, 2_147_483_647],
    ]);
  });

  it("the multimodal form: each {content: [parts]} is one text, its text parts joined by a newline", () => {
    const r = embeddingsRequest(
      body({
        input: [
          {
            content: [
              { type: "text", text: "a photo of" },
              { type: "text", text: "a cat" },
            ],
          },
          { content: [{ type: "text", text: "alone" }] },
        ],
      }),
    );
    expect(r.input).toEqual(["a photo of\na cat", "alone"]);
  });

  it("defaults: float, no dimensions, nothing else; null is the same as absent; other fields are ignored", () => {
    const expected = {
      model: "mock/embed",
      input: ["hello"],
      encoding: "float",
      dimensions: null,
      inputType: null,
      user: null,
      provider: null,
      sessionId: null,
    };
    expect(embeddingsRequest(body({}))).toEqual(expected);
    expect(
      embeddingsRequest(
        body({
          encoding_format: null,
          dimensions: null,
          input_type: null,
          user: null,
          provider: null,
          session_id: null,
          trace: null,
          models: null,
          stream: true,
          something_else: 1,
        }),
      ),
    ).toEqual(expected);
  });

  it("every option read", () => {
    const r = embeddingsRequest(
      body({
        encoding_format: "base64",
        dimensions: 256,
        input_type: "search_query",
        user: "user-1",
        session_id: "s".repeat(256),
        provider: { order: ["openai"], allow_fallbacks: false, max_price: { prompt: 1 } },
        trace: { trace_id: "t" },
      }),
    );
    expect(r).toEqual({
      model: "mock/embed",
      input: ["hello"],
      encoding: "base64",
      dimensions: 256,
      inputType: "search_query",
      user: "user-1",
      provider: { order: ["openai"], allow_fallbacks: false, max_price: { prompt: 1 } },
      sessionId: "s".repeat(256),
    });
  });

  it("limits: 2048 inputs, each text up to 131072 characters and each token list up to 32768 ids", () => {
    expect(
      embeddingsRequest(body({ input: Array.from({ length: MAX_EMBEDDING_INPUTS }, () => "x") })).input,
    ).toHaveLength(2048);
    expect(embeddingsRequest(body({ input: "y".repeat(MAX_TEXT_UNITS) })).input[0]).toHaveLength(131_072);
    expect(
      embeddingsRequest(body({ input: new Array<number>(MAX_TOKEN_IDS).fill(7) })).input[0],
    ).toHaveLength(32_768);
  });
});

describe("embeddingsRequest: each malformed case names the field", () => {
  const cases: [string, unknown, string][] = [
    ["not an object", "hello", "body: must be a JSON object"],
    ["a list body", [], "body: must be a JSON object"],
    ["no model", { input: "x" }, "model: required: the embedding model's id"],
    ["a model that is no string", body({ model: 5 }), "model: must be a model id of 1 to 256 characters"],
    ["an empty model", body({ model: "" }), "model: must be a model id of 1 to 256 characters"],
    [
      "fallback models",
      body({ models: ["a/b"] }),
      "models: not taken by embeddings: vectors of different models are not comparable, so there is no fallback model; name one in model",
    ],
    ["no input", { model: "m/x" }, "input: required: a string, a list of strings or of token ids"],
    ["input null", body({ input: null }), "input: required: a string, a list of strings or of token ids"],
    ["input an object", body({ input: { text: "x" } }), "input: must be a string or a list"],
    ["input a number", body({ input: 5 }), "input: must be a string or a list"],
    ["an empty list", body({ input: [] }), "input: must not be empty"],
    ["an empty text", body({ input: "" }), "input: must not be empty (an empty text has no embedding)"],
    [
      "an empty text in a list",
      body({ input: ["a", ""] }),
      "input[1]: must not be empty (an empty text has no embedding)",
    ],
    [
      "a text too long",
      body({ input: ["a", "z".repeat(MAX_TEXT_UNITS + 1)] }),
      "input[1]: must be at most 131072 characters",
    ],
    [
      "too many inputs",
      body({ input: Array.from({ length: MAX_EMBEDDING_INPUTS + 1 }, () => "x") }),
      "input: at most 2048 inputs per request (2049 given)",
    ],
    ["a number among texts", body({ input: ["a", 1] }), "input[1]: must be a string, as input[0] is"],
    [
      "a text among token ids",
      body({ input: [1, "a"] }),
      "input[1]: must be a token id: an integer from 0 to 2147483647",
    ],
    [
      "a fractional token id",
      body({ input: [1.5] }),
      "input[0]: must be a token id: an integer from 0 to 2147483647",
    ],
    [
      "a negative token id",
      body({ input: [[1], [2, -1]] }),
      "input[1][1]: must be a token id: an integer from 0 to 2147483647",
    ],
    [
      "a token id past 32 bits",
      body({ input: [2 ** 31] }),
      "input[0]: must be a token id: an integer from 0 to 2147483647",
    ],
    [
      "an empty token list",
      body({ input: [[1], []] }),
      "input[1]: must not be empty (no token ids, no embedding)",
    ],
    [
      "too many token ids",
      body({ input: [new Array<number>(MAX_TOKEN_IDS + 1).fill(1)] }),
      "input[0]: at most 32768 token ids",
    ],
    [
      "a number among token lists",
      body({ input: [[1], 2] }),
      "input[1]: must be a list of token ids, as input[0] is",
    ],
    [
      "a boolean",
      body({ input: [true] }),
      "input[0]: must be a string, a token id, a list of token ids or an object with content",
    ],
    [
      "a text among content objects",
      body({ input: [{ content: [{ type: "text", text: "a" }] }, "b"] }),
      "input[1]: must be an object with content, as input[0] is",
    ],
    [
      "content not a list",
      body({ input: [{ content: "a" }] }),
      "input[0].content: must be a non-empty list of parts",
    ],
    [
      "empty content",
      body({ input: [{ content: [] }] }),
      "input[0].content: must be a non-empty list of parts",
    ],
    ["no content", body({ input: [{ text: "a" }] }), "input[0].content: must be a non-empty list of parts"],
    [
      "a part that is no object",
      body({ input: [{ content: ["a"] }] }),
      "input[0].content[0]: must be an object with a type",
    ],
    [
      "a text part without text",
      body({ input: [{ content: [{ type: "text" }] }] }),
      "input[0].content[0].text: must be a string",
    ],
    [
      "an image part",
      body({
        input: [
          { content: [{ type: "text", text: "a" }] },
          {
            content: [
              { type: "text", text: "b" },
              { type: "image_url", image_url: { url: "https://x/y.png" } },
            ],
          },
        ],
      }),
      'input[1].content[1].type: "image_url" cannot be embedded here: this gateway\'s providers embed text only',
    ],
    [
      "an audio part",
      body({ input: [{ content: [{ type: "input_audio", input_audio: { data: "AAAA", format: "wav" } }] }] }),
      'input[0].content[0].type: "input_audio" cannot be embedded here: this gateway\'s providers embed text only',
    ],
    [
      "a video part",
      body({ input: [{ content: [{ type: "input_video", input_video: { data: "x" } }] }] }),
      'input[0].content[0].type: "input_video" cannot be embedded here: this gateway\'s providers embed text only',
    ],
    [
      "a file part",
      body({ input: [{ content: [{ type: "input_file", input_file: { data: "x" } }] }] }),
      'input[0].content[0].type: "input_file" cannot be embedded here: this gateway\'s providers embed text only',
    ],
    [
      "an unknown part",
      body({ input: [{ content: [{ type: "thing" }] }] }),
      'input[0].content[0].type: must be "text" (image_url, input_audio, input_video and input_file are not embedded here)',
    ],
    [
      "empty joined text",
      body({ input: [{ content: [{ type: "text", text: "" }] }] }),
      "input[0].content: must not be empty (an empty text has no embedding)",
    ],
    ["another encoding", body({ encoding_format: "int8" }), 'encoding_format: must be "float" or "base64"'],
    [
      "encoding in capitals",
      body({ encoding_format: "BASE64" }),
      'encoding_format: must be "float" or "base64"',
    ],
    ["zero dimensions", body({ dimensions: 0 }), "dimensions: must be an integer from 1 to 65536"],
    ["fractional dimensions", body({ dimensions: 1.5 }), "dimensions: must be an integer from 1 to 65536"],
    ["dimensions as text", body({ dimensions: "256" }), "dimensions: must be an integer from 1 to 65536"],
    ["an empty input_type", body({ input_type: "" }), "input_type: must be a non-empty string"],
    [
      "a long input_type",
      body({ input_type: "q".repeat(257) }),
      "input_type: must be at most 256 characters",
    ],
    ["a user that is no string", body({ user: 5 }), "user: must be a non-empty string"],
    ["a long user", body({ user: "u".repeat(1025) }), "user: must be at most 1024 characters"],
    [
      "a long session_id",
      body({ session_id: "s".repeat(257) }),
      "session_id: must be at most 256 characters",
    ],
    ["provider not an object", body({ provider: "openai" }), "provider: must be an object"],
    [
      "provider.order not a list",
      body({ provider: { order: "openai" } }),
      "provider.order: must be a list of at most 64 provider slugs",
    ],
    [
      "provider.only with a number",
      body({ provider: { only: ["a", 1] } }),
      "provider.only[1]: must be a provider slug or name",
    ],
    [
      "provider.allow_fallbacks as text",
      body({ provider: { allow_fallbacks: "no" } }),
      "provider.allow_fallbacks: must be a boolean",
    ],
    [
      "provider.max_price a number",
      body({ provider: { max_price: 1 } }),
      "provider.max_price: must be an object",
    ],
    ["trace not an object", body({ trace: "t" }), "trace: must be an object"],
  ];
  for (const [what, b, message] of cases) {
    it(what, () => expect(refusal(b)).toBe(message));
  }

  it("the metadata names the field too", () => {
    try {
      embeddingsRequest(body({ dimensions: -1 }));
    } catch (err) {
      expect((err as DomainError).metadata).toEqual({ field: "dimensions" });
      return;
    }
    throw new Error("expected a 400");
  });
});
