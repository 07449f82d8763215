import type { ProviderChunk } from "../providers/provider.js";
import { ChunkEncoder, SSE_DONE, errorChunk, sse, type ChunkHead } from "./wire.js";

/**
 * How an open stream is written for the client's API surface: the chat completions chunks
 * (ChatStreamEncoder, below), or the Responses and Messages events (src/gateway/surfaces/). The
 * data plane (stream.ts) forwards, counts and settles the same way for each; only the bytes
 * differ. Each method returns the SSE text to write ("" for nothing).
 */
export interface StreamEncoder {
  /** What opens the stream, before the first chunk's events (a surface's start events). */
  open(): string;
  /** The events of one upstream chunk (reasoning already removed when the client asked). */
  chunk(c: ProviderChunk): string;
  /** The stream reached its end: the usage (chat's usage object, usageWire) and the terminal events. */
  finish(usage: Record<string, unknown>, finishReason: string | null): string;
  /**
   * It failed after opening: an upstream failure (502), a timeout (524) or a shutdown (503), with
   * the usage of what was generated; the terminal events of a failed stream.
   */
  fail(status: number, message: string, errorType: string, usage: Record<string, unknown>): string;
  /** Written last, also after `finish` and `fail` (the chat stream's `[DONE]`); "" for none. */
  readonly done: string;
}

/** Makes the encoder once the serving attempt is known (its model and provider name the stream). */
export type StreamEncoderFor = (h: ChunkHead) => StreamEncoder;

/** The chat completions stream (docs/wire-compatibility.md "Chat answers"). */
export class ChatStreamEncoder implements StreamEncoder {
  private readonly chunks: ChunkEncoder;
  readonly done = SSE_DONE;

  constructor(private readonly h: ChunkHead) {
    this.chunks = new ChunkEncoder(h);
  }

  open(): string {
    return "";
  }

  chunk(c: ProviderChunk): string {
    return this.chunks.content(c);
  }

  finish(usage: Record<string, unknown>): string {
    return this.chunks.usage(usage);
  }

  fail(status: number, message: string, errorType: string, usage: Record<string, unknown>): string {
    return sse(errorChunk(this.h, status, message, errorType, usage));
  }
}

export const chatStream: StreamEncoderFor = (h) => new ChatStreamEncoder(h);
