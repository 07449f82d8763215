/*
 * How deep an ingest body nests. The edge refuses any JSON body nested deeper than 128 levels of
 * arrays and objects (MAX_JSON_DEPTH in http/validation.ts: 400 `<field>: nested deeper than 128
 * levels`), but ingest parses its own body (on a worker thread when there is a pool), after the
 * edge, so the same rule is applied here, to every value of the body, fields ingest ignores
 * included: whatever copies or serialises a record (structured clone between threads,
 * JSON.stringify) recurses, and a 32 MiB body can nest far deeper than any call stack. Levels are
 * counted as at the edge: the body's object is level 1, `generations` level 2, a record level 3
 * (an NDJSON line too, so that one record is accepted or refused alike in both media types).
 */

/** The same limit as MAX_JSON_DEPTH (not imported: this module runs on worker threads). */
export const MAX_DEPTH = 128;

/** The problem's text after the field's name. */
export const TOO_DEEP = `nested deeper than ${MAX_DEPTH} levels`;

/** How many segments of a too-deep value's path below the container its name shows. */
const PATH_SEGMENTS = 6;
/** A longer key in that path is cut to this many characters and `…`. */
const PATH_KEY_CHARS = 64;

const isContainer = (v: unknown): v is object => typeof v === "object" && v !== null;

/**
 * Whether `container`, itself at nesting level `level`, holds arrays or objects deeper than
 * MAX_DEPTH. Recursive, but never past MAX_DEPTH frames whatever the body holds (it answers true
 * at the first container past the limit), and it allocates nothing: a record's values are nearly
 * all scalars, so for one this is one pass over its keys (about 0.3 µs; an iterative scan with its
 * own stack took three times as long).
 */
export function nestsTooDeep(container: object, level: number): boolean {
  if (level > MAX_DEPTH) return true;
  if (Array.isArray(container)) {
    for (let i = 0; i < container.length; i++) {
      const v: unknown = container[i];
      if (isContainer(v) && nestsTooDeep(v, level + 1)) return true;
    }
    return false;
  }
  for (const k in container) {
    const v = (container as Record<string, unknown>)[k];
    if (isContainer(v) && nestsTooDeep(v, level + 1)) return true;
  }
  return false;
}

/**
 * The place of the first too-deep value (in document order) below `container` (at `level`), as
 * the edge names it: `.x.a[0].b`, its first PATH_SEGMENTS segments without the array indices that
 * end them, long keys cut short; "" when there is none.
 */
export function tooDeepPath(container: object, level: number): string {
  const stack: [unknown, string[]][] = [[container, []]];
  let found: string[] = [];
  while (stack.length > 0) {
    const [value, path] = stack.pop() as [unknown, string[]];
    if (level + path.length > MAX_DEPTH) {
      found = path;
      break;
    }
    const entries = Object.entries(value as Record<string, unknown>);
    for (let k = entries.length - 1; k >= 0; k--) {
      const [key, v] = entries[k] as [string, unknown];
      if (isContainer(v)) stack.push([v, [...path, key]]);
    }
  }
  const segments = found.slice(0, PATH_SEGMENTS);
  while (segments.length > 0 && /^\d+$/.test(segments[segments.length - 1] as string)) segments.pop();
  let out = "";
  for (const s of segments) {
    if (/^\d+$/.test(s) && out !== "") out += `[${s}]`;
    else {
      const cut =
        s.length > PATH_KEY_CHARS ? `${s.slice(0, PATH_KEY_CHARS).replace(/[\uD800-\uDBFF]$/, "")}…` : s;
      out += `.${cut}`;
    }
  }
  return out;
}
