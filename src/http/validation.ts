import { Ajv, type ErrorObject } from "ajv";
import addFormatsModule from "ajv-formats";
import type { FastifySchemaCompiler } from "fastify";

// ajv-formats ships CommonJS; its default export arrives wrapped under NodeNext resolution.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/**
 * Two validators: JSON bodies are strict (no type coercion: "10" is not a number, 1 is not a
 * boolean); query strings and path parameters are text by nature and are coerced. Unknown
 * properties are ignored, never removed from or added to the caller's object.
 */
function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    coerceTypes: coerce,
    useDefaults: true,
    removeAdditional: false,
    allErrors: false,
    strict: false,
  });
  addFormats(ajv);
  return ajv;
}

const bodyAjv = makeAjv(false);
const textAjv = makeAjv(true);

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === "body" ? bodyAjv : textAjv;
  const validate = ajv.compile<unknown>(schema as object);
  if (httpPart !== "body" && httpPart !== "querystring") return validate;
  const checked = (data: unknown): boolean => {
    const at = findNul(data);
    if (at !== null) {
      checked.errors = [nulError(at)];
      return false;
    }
    const ok = validate(data);
    checked.errors = validate.errors ?? null;
    return ok;
  };
  checked.errors = null as ErrorObject[] | null;
  return checked;
};

const NUL = "\u0000";

const nulError = (instancePath: string): ErrorObject => ({
  instancePath,
  schemaPath: "#",
  keyword: "nul",
  params: {},
  message: "must not contain the NUL character (\\u0000)",
});

/** A position in a JSON value, as a chain of keys back to the root (built only when needed). */
interface At {
  key: string;
  parent: At | null;
}

const pointer = (at: At | null): string => {
  const keys: string[] = [];
  for (let a = at; a; a = a.parent) keys.push(a.key.replace(/~/g, "~0").replace(/\//g, "~1"));
  return keys
    .reverse()
    .map((k) => `/${k}`)
    .join("");
};

/**
 * The JSON pointer of the first string (or object key) that contains U+0000, or null. PostgreSQL
 * text cannot store that character, so it is refused at the edge on every store alike. Iterative:
 * a 1 MiB body can nest far deeper than the call stack. Every body is scanned, and nearly none
 * holds the character: the scan keeps no positions, and only a body that has one is walked again
 * to name it.
 */
export function findNul(root: unknown): string | null {
  return hasNul(root) ? locateNul(root) : null;
}

function hasNul(root: unknown): boolean {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === "string") {
      if (value.includes(NUL)) return true;
    } else if (Array.isArray(value)) {
      for (const v of value) stack.push(v);
    } else if (value !== null && typeof value === "object") {
      for (const k of Object.keys(value)) {
        if (k.includes(NUL)) return true;
        stack.push((value as Record<string, unknown>)[k]);
      }
    }
  }
  return false;
}

/** The first position in document order whose key or string holds U+0000 (see findNul). */
function locateNul(root: unknown): string | null {
  const stack: [unknown, At | null][] = [[root, null]];
  while (stack.length > 0) {
    const [value, at] = stack.pop()!;
    if (at !== null && at.key.includes(NUL)) return pointer(at);
    if (typeof value === "string") {
      if (value.includes(NUL)) return pointer(at);
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], { key: String(i), parent: at }]);
    } else if (value !== null && typeof value === "object") {
      const entries = Object.entries(value as Record<string, unknown>);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, v] = entries[i]!;
        stack.push([v, { key: k, parent: at }]);
      }
    }
  }
  return null;
}

/** `/filters/3/value` → `filters[3].value` */
export function fieldPath(instancePath: string, child?: string): string {
  const parts = instancePath.split("/").filter(Boolean);
  if (child !== undefined) parts.push(child);
  let out = "";
  for (const p of parts) {
    const seg = p.replace(/~1/g, "/").replace(/~0/g, "~");
    out += /^\d+$/.test(seg) ? `[${seg}]` : out === "" ? seg : `.${seg}`;
  }
  return out;
}

function describe(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case "required":
      return "is required";
    case "type":
      return `must be ${String(p.type)}`;
    case "enum":
      return `must be one of ${(p.allowedValues as unknown[]).map(String).join(", ")}`;
    case "const":
      return `must be ${JSON.stringify(p.allowedValue)}`;
    case "maxItems":
      return `at most ${String(p.limit)} items`;
    case "minItems":
      return `at least ${String(p.limit)} item${p.limit === 1 ? "" : "s"}`;
    case "maxLength":
      return `at most ${String(p.limit)} characters`;
    case "minLength":
      return `at least ${String(p.limit)} character${p.limit === 1 ? "" : "s"}`;
    case "pattern":
      return `must match ${String(p.pattern)}`;
    case "format":
      return `must be a valid ${String(p.format)}`;
    default:
      return e.message ?? "is invalid";
  }
}

/**
 * One message that names the field: `dimensions: at most 2 items`, `limit: must be number or null`.
 * Errors of one union (anyOf) at the same path are merged into one sentence.
 */
export function formatValidationErrors(errors: ErrorObject[], part: string): string {
  const first = errors[0];
  if (!first) return "Invalid request";
  const missing =
    first.keyword === "required"
      ? String((first.params as { missingProperty: string }).missingProperty)
      : undefined;
  let field = fieldPath(first.instancePath, missing);
  if (field === "") field = part === "body" ? "body" : part;
  const merged = mergeUnion(errors.filter((e) => e.instancePath === first.instancePath));
  return `${field}: ${merged ?? describe(first)}`;
}

/**
 * The branches of a union at one path, as one sentence: `must be number or null`, or for unions of
 * literals `must be one of daily, weekly` (never only the first branch, never a type twice).
 */
function mergeUnion(samePath: ErrorObject[]): string | null {
  const branches = samePath.filter((e) => e.keyword !== "anyOf" && e.keyword !== "oneOf");
  if (branches.length < 2 || !branches.every((e) => ["type", "const", "enum"].includes(e.keyword))) {
    return null;
  }
  const values: string[] = [];
  const types: string[] = [];
  for (const e of branches) {
    const p = e.params as { type?: unknown; allowedValue?: unknown; allowedValues?: unknown[] };
    if (e.keyword === "const") values.push(String(p.allowedValue));
    else if (e.keyword === "enum") values.push(...(p.allowedValues ?? []).map(String));
    else types.push(String(p.type));
  }
  const unique = (xs: string[]) => [...new Set(xs)];
  return values.length > 0
    ? `must be one of ${unique(values).join(", ")}`
    : `must be ${unique(types).join(" or ")}`;
}
