import { isObject, type Json } from "../../lib/json-object.js";
import type { Api } from "../surfaces/api.js";
import type { TextRole } from "./content-scan.js";

/**
 * Where each API surface's request body holds text the model reads (docs/guardrails-filters.md
 * "What is scanned"), one walker per body shape, so that a field not named here is never read or
 * rewritten. A walker hands each text to the visitor and returns the body with the visitor's
 * answers in place: a copy of what changed only, the same object when nothing did. Anything of an
 * unexpected type is left as it is (the surface's own validation answers for it).
 */
export interface TextVisitor {
  /** A text; returns it, or its rewrite. */
  text(s: string, role: TextRole): string;
  /** Tool-call arguments as JSON text (a chat `arguments` string). */
  jsonText(s: string, role: TextRole): string;
  /** Tool-call arguments as a JSON value (an Anthropic `tool_use.input`). */
  json(v: unknown, role: TextRole): unknown;
}

type Walker = (body: unknown, v: TextVisitor) => unknown;

/** `o` with `key` set to `value`: `o` itself when that changes nothing. */
function withKey(o: Json, key: string, value: unknown): Json {
  return o[key] === value ? o : { ...o, [key]: value };
}

/** `a` mapped: `a` itself when no element changed. */
function mapItems(a: readonly unknown[], f: (x: unknown) => unknown): unknown {
  let out: unknown[] | null = null;
  for (let i = 0; i < a.length; i++) {
    const y = f(a[i]);
    if (y !== a[i]) (out ??= a.slice())[i] = y;
  }
  return out ?? a;
}

/** `o[key]` rewritten by `f` when it is a string. */
function stringAt(o: Json, key: string, f: (s: string) => string): Json {
  const v = o[key];
  return typeof v === "string" ? withKey(o, key, f(v)) : o;
}

/** `o[key]` rewritten by `f` when it is an array. */
function arrayAt(o: Json, key: string, f: (x: unknown) => unknown): Json {
  const v = o[key];
  return Array.isArray(v) ? withKey(o, key, mapItems(v, f)) : o;
}

/** Content that is a string or a list of parts: strings and the named parts' text fields. */
function content(v: unknown, parts: Readonly<Record<string, string>>, visit: (s: string) => string): unknown {
  if (typeof v === "string") return visit(v);
  if (!Array.isArray(v)) return v;
  return mapItems(v, (p) => {
    if (!isObject(p) || typeof p.type !== "string" || !Object.hasOwn(parts, p.type)) return p;
    return stringAt(p, parts[p.type] as string, visit);
  });
}

const roleOf = (m: Json): TextRole => (m.role === "user" ? "user" : "other");

/**
 * Chat completions: each message's `content` (a string, or `text` parts; images, audio and files
 * are not text), an assistant's `refusal` and its tool calls' `arguments` (and the legacy
 * `function_call`'s). Not: `name`, `tool_call_id`, `reasoning`, `reasoning_details` (signed),
 * tool definitions.
 */
const chat: Walker = (body, v) => {
  if (!isObject(body)) return body;
  return arrayAt(body, "messages", (m) => {
    if (!isObject(m)) return m;
    const role = roleOf(m);
    const text = (s: string): string => v.text(s, role);
    const args = (c: unknown): unknown =>
      isObject(c) ? stringAt(c, "arguments", (s) => v.jsonText(s, "other")) : c;
    let out = withKey(m, "content", content(m.content, { text: "text" }, text));
    out = stringAt(out, "refusal", (s) => v.text(s, "other"));
    out = arrayAt(out, "tool_calls", (c) => (isObject(c) ? withKey(c, "function", args(c.function)) : c));
    return withKey(out, "function_call", args(out.function_call));
  });
};

/**
 * Anthropic Messages: `system` (a string or text blocks) and each message's content: a string,
 * `text` blocks, `tool_use` inputs, `tool_result` contents (a string or text blocks). Not:
 * `thinking` and `redacted_thinking` (signed), images and documents, ids, `cache_control`, tools.
 */
const messages: Walker = (body, v) => {
  if (!isObject(body)) return body;
  const out = withKey(
    body,
    "system",
    content(body.system, { text: "text" }, (s) => v.text(s, "other")),
  );
  return arrayAt(out, "messages", (m) => {
    if (!isObject(m)) return m;
    const role = roleOf(m);
    const other = (s: string): string => v.text(s, "other");
    if (typeof m.content === "string") return withKey(m, "content", v.text(m.content, role));
    return arrayAt(m, "content", (b) => {
      if (!isObject(b)) return b;
      if (b.type === "text") return stringAt(b, "text", (s) => v.text(s, role));
      if (b.type === "tool_use") return "input" in b ? withKey(b, "input", v.json(b.input, "other")) : b;
      if (b.type === "tool_result") return withKey(b, "content", content(b.content, { text: "text" }, other));
      return b;
    });
  });
};

const RESPONSES_PARTS = { input_text: "text", output_text: "text", refusal: "refusal" };

/**
 * Responses: `instructions`, and `input` as a string or items: messages' content (a string or
 * `input_text`, `output_text`, `refusal` parts), `function_call` arguments, `function_call_output`
 * outputs (a string or text parts). Not: `reasoning` items (encrypted), images, files, ids, tools.
 */
const responses: Walker = (body, v) => {
  if (!isObject(body)) return body;
  let out = stringAt(body, "instructions", (s) => v.text(s, "other"));
  if (typeof out.input === "string") return withKey(out, "input", v.text(out.input, "user"));
  out = arrayAt(out, "input", (it) => {
    if (!isObject(it)) return it;
    if (it.type === undefined || it.type === "message") {
      const role = roleOf(it);
      return withKey(
        it,
        "content",
        content(it.content, RESPONSES_PARTS, (s) => v.text(s, role)),
      );
    }
    if (it.type === "function_call") return stringAt(it, "arguments", (s) => v.jsonText(s, "other"));
    if (it.type === "function_call_output") {
      return withKey(
        it,
        "output",
        content(it.output, RESPONSES_PARTS, (s) => v.text(s, "other")),
      );
    }
    return it;
  });
  return out;
};

/**
 * Embeddings: `input` as a string, a list of strings, or multimodal items' `text` parts (token
 * id lists are not text). Everything embedded counts as the user's.
 */
const embeddings: Walker = (body, v) => {
  if (!isObject(body)) return body;
  const text = (s: string): string => v.text(s, "user");
  if (typeof body.input === "string") return withKey(body, "input", text(body.input));
  return arrayAt(body, "input", (x) => {
    if (typeof x === "string") return text(x);
    return isObject(x) && Array.isArray(x.content)
      ? withKey(x, "content", content(x.content, { text: "text" }, text))
      : x;
  });
};

export const REQUEST_WALKERS: Readonly<Record<Api, Walker>> = { chat, messages, responses, embeddings };
