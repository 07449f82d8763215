import { UUID_RE } from "../lib/ids.js";
import { UsageError } from "./usage-error.js";

/** Longest organization or key name the CLI accepts. */
export const MAX_NAME_LENGTH = 200;

/** A display name: trimmed, 1 to MAX_NAME_LENGTH characters, no control characters. */
export function parseName(what: string, raw: string): string {
  const name = raw.trim();
  if (name === "") throw new UsageError(`${what}: must not be empty`);
  if (name.length > MAX_NAME_LENGTH) throw new UsageError(`${what}: at most ${MAX_NAME_LENGTH} characters`);
  // eslint-disable-next-line no-control-regex -- the point is to refuse control characters
  if (/[\u0000-\u001f\u007f]/.test(name))
    throw new UsageError(`${what}: must not contain control characters`);
  return name;
}

export function parseUuid(what: string, raw: string): string {
  if (!UUID_RE.test(raw)) throw new UsageError(`${what}: must be a UUID (see \`gatehouse org list\`)`);
  return raw.toLowerCase();
}
