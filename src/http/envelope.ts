/** The wire form of every error: `{"error":{"code","message","metadata"}}`, code = HTTP status. */
export interface ErrorEnvelope {
  error: { code: number; message: string; metadata: Record<string, unknown> | null };
}

export const envelope = (
  code: number,
  message: string,
  metadata: Record<string, unknown> | null = null,
): ErrorEnvelope => ({ error: { code, message, metadata } });
