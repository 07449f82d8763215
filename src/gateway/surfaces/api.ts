/**
 * The API surfaces a model request can come through. Each is an inbound adapter over the one data
 * plane (src/gateway/chat/: auth, fair use, reservation, fallbacks, settlement, recording): it
 * translates its request into the chat request the plane runs, and the plane's answer back into
 * its own shape. A generation records which one it came through (the `api` column and analytics
 * dimension, docs/generation-record.md).
 */
export type Api = "chat" | "responses" | "messages" | "embeddings";
