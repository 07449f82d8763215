import { invalid } from "../../domain/errors.js";
import type { ModelEntry } from "./catalog.js";

/**
 * What a model answers: `chat` (chat completions, and the Responses and Messages surfaces built on
 * them) or `embedding` (POST /embeddings: vectors, no completion). A model id is one kind on every
 * provider serving it (the providers file's `kind`, default `chat`): an embedding request can
 * never fall back to a chat endpoint of the same id, nor the reverse.
 */
export const MODEL_KINDS = ["chat", "embedding"] as const;
export type ModelKind = (typeof MODEL_KINDS)[number];

/** Each kind's endpoint, for the refusal's hint. */
const ENDPOINT: Record<ModelKind, string> = {
  chat: "POST /api/v1/chat/completions",
  embedding: "POST /api/v1/embeddings",
};
const LISTED: Record<ModelKind, string> = {
  chat: "GET /api/v1/models",
  embedding: "GET /api/v1/embeddings/models",
};

/**
 * The model, if it is of `kind`; else a 400 naming `field` (`model`, or `models` for a fallback
 * list): a chat request to an embedding model, or an embedding request to a chat model, is the
 * request's mistake, refused before anything is reserved or sent.
 */
export function requireModelKind(model: ModelEntry, kind: ModelKind, field = "model"): ModelEntry {
  if (model.kind === kind) return model;
  throw invalid(
    `${field}: ${model.id} is ${model.kind === "embedding" ? "an embedding" : "a chat"} model: ` +
      `use it with ${ENDPOINT[model.kind]}, not here (${LISTED[kind]} lists the ${kind} models)`,
    { model: model.id, kind: model.kind },
  );
}
