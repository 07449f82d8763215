/**
 * Reading the surfaces' JSON without trusting its shape: a missing or mistyped field is absent,
 * never an exception, so one odd field does not lose the whole answer.
 */
export type Json = Record<string, unknown>;

export const record = (v: unknown): Json =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Json) : {};

export const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** A token count: a finite number ≥ 0, else 0. */
export const count = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0);

/** An amount of money, or null when the answer has none. */
export const money = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

export const str = (v: unknown): string => (typeof v === "string" ? v : "");

/** An SSE event's data as a JSON object; data that is not JSON is an error of the stream. */
export function parseData(data: string): Json {
  try {
    return record(JSON.parse(data));
  } catch {
    throw new Error(`the stream sent data that is not JSON: ${data.slice(0, 80)}`);
  }
}

/**
 * The message of an error body. The chat and Responses surfaces answer `{error: {code, message}}`,
 * the Messages surface `{type: "error", error: {type, message}}`: both keep it in `error.message`.
 */
export const errorMessage = (body: unknown): string | null => {
  const message = record(record(body).error).message;
  return typeof message === "string" ? message : null;
};
