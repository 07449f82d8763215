import type { paths } from "./schema.gen.ts";
import { clearKey, getKey } from "./session.ts";
import { text } from "../lib/format.ts";

/**
 * Typed calls to the management API. Paths, parameters, bodies and answers are the types that
 * openapi-typescript generated from the server's own OpenAPI document (schema.gen.ts), so a call
 * that does not match the API does not compile. Requests go to this origin only (a relative URL)
 * with the management key of the session.
 */
export const API_BASE = "/api/v1";

type Method = "get" | "post" | "put" | "patch" | "delete";
type Op<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;
type JsonOf<T> = T extends { content: { "application/json": infer B } } ? B : never;
export type Body<P extends keyof paths, M extends Method> =
  Op<P, M> extends { requestBody: infer R } ? JsonOf<NonNullable<R>> : never;
type Success<O> = O extends { responses: infer R }
  ? R extends { 200: infer A }
    ? JsonOf<A>
    : R extends { 201: infer A }
      ? JsonOf<A>
      : never
  : never;
export type Answer<P extends keyof paths, M extends Method> = Success<Op<P, M>>;
type PathParams<O> = O extends { parameters: { path: infer PP } } ? PP : never;
type QueryParams<O> = O extends { parameters: { query?: infer Q } } ? Q : never;

export interface CallOptions<P extends keyof paths, M extends Method> {
  path?: PathParams<Op<P, M>>;
  query?: QueryParams<Op<P, M>>;
  body?: Body<P, M>;
}

/** An error answer of the API: the envelope's status and message (`field: problem`). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly metadata: unknown = null,
  ) {
    super(message);
  }
}

/** Called when the API refuses the session's key (401): the app returns to the sign-in page. */
let onUnauthorized: () => void = () => undefined;
export const setUnauthorizedHandler = (fn: () => void) => (onUnauthorized = fn);

export function urlFor(path: string, params?: Record<string, unknown>, query?: Record<string, unknown>) {
  const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(text(params?.[name])));
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null) qs.set(k, text(v));
  const s = qs.toString();
  return `${API_BASE}${filled}${s ? `?${s}` : ""}`;
}

export async function call<P extends keyof paths, M extends Method>(
  method: M,
  path: P,
  opts: CallOptions<P, M> = {},
  key: string | null = getKey(),
): Promise<Answer<P, M>> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (key) headers.authorization = `Bearer ${key}`;
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(urlFor(path, opts.path, opts.query), {
    method: method.toUpperCase(),
    headers,
    credentials: "omit",
    ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    // Not the API's answer: a reverse proxy's error page while Gatehouse is down, for example.
    throw new ApiError(
      res.status,
      `HTTP ${res.status}: the answer is not from the Gatehouse API (a proxy's error page?)`,
    );
  }
  if (!res.ok) {
    const err = (json as { error?: { message?: string; metadata?: unknown } } | null)?.error;
    if (res.status === 401 && key === getKey()) {
      clearKey();
      onUnauthorized();
    }
    throw new ApiError(res.status, err?.message ?? `HTTP ${res.status}`, err?.metadata ?? null);
  }
  return json as Answer<P, M>;
}

export const errorText = (e: unknown): string =>
  e instanceof ApiError ? e.message : e instanceof Error ? e.message : String(e);
