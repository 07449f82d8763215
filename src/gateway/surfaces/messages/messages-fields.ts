import { invalid, type DomainError } from "../../../domain/errors.js";

/** Helpers shared by the Messages request translation (messages-request.ts, messages-turns.ts). */
import { isObject, type Json } from "../../../lib/json-object.js";

export { isObject, type Json };

/** The 400 for a malformed field, named with its path: `messages[2].content[0].type: ...`. */
export const fieldError = (field: string, problem: string): DomainError => invalid(`${field}: ${problem}`);

/** Absent: a Messages field sent as null means the same as one left out (the client's nullables). */
export const absent = (v: unknown): v is null | undefined => v === undefined || v === null;

/**
 * What the translation drops because a chat completions provider cannot carry it, each named
 * once, in the order met: a top-level field (`context_management`), a field of a block, tool or
 * object as `<where>.<field>` (`thinking.display`, `tools.defer_loading`), `cache_control` wherever
 * it sits, a hosted tool as `tools[<type>]`. The route names them in `x-gatehouse-left-out`.
 *
 * The names come from the client's keys, and go into a header: each is cut to header-safe
 * characters (any other becomes `_`) and 64 of them, and at most MAX_NAMES are listed, the rest
 * counted (`and 12 more`), so that no body can make the header invalid or unbounded.
 */
export class LeftOut {
  static readonly MAX_NAMES = 32;
  private readonly names = new Set<string>();
  /** Names past MAX_NAMES: counted, not listed. */
  private readonly more = new Set<string>();

  add(name: string): void {
    const safe = name.replace(/[^\w.:[\]-]/g, "_").slice(0, 64);
    if (this.names.has(safe)) return;
    if (this.names.size < LeftOut.MAX_NAMES) this.names.add(safe);
    else this.more.add(safe);
  }

  /** Notes every non-null field of `o` not in `known`, as `<where>.<field>`. */
  extras(o: Json, known: ReadonlySet<string>, where: string): void {
    for (const key in o) {
      if (known.has(key) || absent(o[key])) continue;
      this.add(key === "cache_control" ? key : `${where}.${key}`);
    }
  }

  list(): string[] {
    return this.more.size > 0 ? [...this.names, `and ${this.more.size} more`] : [...this.names];
  }
}

/** A required string of at most `max` characters (at least one). */
export function stringField(v: unknown, field: string, max: number): string {
  if (typeof v !== "string" || v.length === 0) throw fieldError(field, "required: a non-empty string");
  if (v.length > max) throw fieldError(field, `at most ${max} characters`);
  return v;
}
