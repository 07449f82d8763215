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
    const bad = findBadValue(data);
    if (bad !== null) {
      checked.errors = [bad];
      return false;
    }
    const ok = validate(data);
    checked.errors = validate.errors ?? null;
    return ok;
  };
  checked.errors = null as ErrorObject[] | null;
  return checked;
};

/**
 * The deepest nesting of arrays and objects a JSON body or query string may have: the body's own
 * object is level 1, so `{"a":[{}]}` is 3 levels deep. A value nested deeper is refused at the edge
 * (400 `<field>: nested deeper than 128 levels`): token counting and the upstream body serialise
 * whatever a schema lets through (content parts, tools), and JSON.stringify recurses, so a
 * 1 MiB body nested 20,000 deep would otherwise fail as a RangeError (a 500). No API shape, JSON
 * Schema of a tool or content part comes close to 128 levels.
 */
export const MAX_JSON_DEPTH = 128;

const NUL = "\u0000";

const nulError = (instancePath: string): ErrorObject => ({
  instancePath,
  schemaPath: "#",
  keyword: "nul",
  params: {},
  message: "must not contain the NUL character (\\u0000)",
});

const depthError = (instancePath: string): ErrorObject => ({
  instancePath,
  schemaPath: "#",
  keyword: "depth",
  params: { limit: MAX_JSON_DEPTH },
  message: `nested deeper than ${MAX_JSON_DEPTH} levels`,
});

/** A position in a JSON value, as a chain of keys back to the root (built only when needed). */
interface At {
  key: string;
  parent: At | null;
}

const escapeKey = (key: string): string => key.replace(/~/g, "~0").replace(/\//g, "~1");

const pointer = (at: At | null): string => {
  const keys: string[] = [];
  for (let a = at; a; a = a.parent) keys.push(escapeKey(a.key));
  return keys
    .reverse()
    .map((k) => `/${k}`)
    .join("");
};

/** How many leading segments of a too-deep value's path its error names. */
const DEPTH_PATH_SEGMENTS = 8;
/** A longer key in that path is cut to this many characters and `…`. */
const DEPTH_PATH_KEY_CHARS = 64;

/**
 * The start of a too-deep value's path, enough to find it in the body: its first
 * DEPTH_PATH_SEGMENTS segments without the array indices that end them (`messages[0].content[0].x`,
 * not `messages[0].content[0].x[0][0][0]`; a body that is nothing but arrays names `body`), long
 * keys cut short. The whole path is MAX_JSON_DEPTH segments long.
 */
const depthPointer = (at: At | null): string => {
  const keys: string[] = [];
  for (let a = at; a; a = a.parent) keys.push(a.key);
  keys.reverse();
  keys.length = Math.min(keys.length, DEPTH_PATH_SEGMENTS);
  while (keys.length > 0 && /^\d+$/.test(keys[keys.length - 1]!)) keys.pop();
  const cut = (k: string) =>
    k.length > DEPTH_PATH_KEY_CHARS
      ? `${k.slice(0, DEPTH_PATH_KEY_CHARS).replace(/[\uD800-\uDBFF]$/, "")}…` // never half a pair
      : k;
  return keys.map((k) => `/${escapeKey(cut(k))}`).join("");
};

/**
 * What the edge refuses in any JSON body or query string before its schema is checked, as the
 * validation error that names it, or null:
 * - a string (or object key) that contains U+0000: PostgreSQL text cannot store that character, so
 *   it is refused on every store alike;
 * - arrays and objects nested deeper than MAX_JSON_DEPTH.
 * Iterative: a 1 MiB body can nest far deeper than the call stack. Every request is scanned, and
 * nearly none has a problem: the scan keeps no positions (only a numeric depth per container it
 * will visit), stops at the first problem, and only then is the body walked again to name it.
 */
export function findBadValue(root: unknown): ErrorObject | null {
  return hasBadValue(root) ? locateBadValue(root) : null;
}

/**
 * The JSON pointer of the first string (or object key) that holds U+0000, or null: findBadValue's
 * scan, when what it finds first is a NUL (not one past a too-deep value, which it never reaches).
 */
export function findNul(root: unknown): string | null {
  const bad = findBadValue(root);
  return bad?.keyword === "nul" ? bad.instancePath : null;
}

function hasBadValue(root: unknown): boolean {
  if (root === null || typeof root !== "object") return typeof root === "string" && root.includes(NUL);
  // Containers only, each with its own depth (the body itself is 1); strings are checked in place.
  const stack: object[] = [root];
  const depths: number[] = [1];
  while (stack.length > 0) {
    const value = stack.pop()!;
    const depth = depths.pop()!;
    if (Array.isArray(value)) {
      for (const v of value as unknown[]) {
        if (typeof v === "string") {
          if (v.includes(NUL)) return true;
        } else if (v !== null && typeof v === "object") {
          if (depth >= MAX_JSON_DEPTH) return true;
          stack.push(v);
          depths.push(depth + 1);
        }
      }
    } else {
      for (const k of Object.keys(value)) {
        if (k.includes(NUL)) return true;
        const v = (value as Record<string, unknown>)[k];
        if (typeof v === "string") {
          if (v.includes(NUL)) return true;
        } else if (v !== null && typeof v === "object") {
          if (depth >= MAX_JSON_DEPTH) return true;
          stack.push(v);
          depths.push(depth + 1);
        }
      }
    }
  }
  return false;
}

/** The first problem in document order (see findBadValue): a NUL, or a container too deep. */
function locateBadValue(root: unknown): ErrorObject | null {
  const stack: [unknown, At | null, number][] = [[root, null, 1]];
  while (stack.length > 0) {
    const [value, at, depth] = stack.pop()!;
    if (at !== null && at.key.includes(NUL)) return nulError(pointer(at));
    if (typeof value === "string") {
      if (value.includes(NUL)) return nulError(pointer(at));
    } else if (value !== null && typeof value === "object" && depth > MAX_JSON_DEPTH) {
      return depthError(depthPointer(at));
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--)
        stack.push([value[i], { key: String(i), parent: at }, depth + 1]);
    } else if (value !== null && typeof value === "object") {
      const entries = Object.entries(value as Record<string, unknown>);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, v] = entries[i]!;
        stack.push([v, { key: k, parent: at }, depth + 1]);
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
