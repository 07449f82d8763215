/**
 * Credential-shaped text anywhere in a string: a Gatehouse key (`sk-gh-v1-…`), any `sk-…` style
 * key, and the value of a Bearer or Basic authorization.
 */
const CREDENTIAL_RE =
  /\b(sk-[A-Za-z0-9]{1,8}-v1-|sk-(?:or-|ant-|proj-)?)[A-Za-z0-9_-]{8,}|\b(Bearer|Basic)\s+[^\s",]+/g;

/** Replaces credential-shaped text with `[redacted]` (log lines, upstream error messages). */
export function redactCredentials(line: string): string {
  return line.replace(CREDENTIAL_RE, (m: string, prefix: string | undefined, scheme: string | undefined) =>
    scheme ? `${scheme} [redacted]` : `${prefix ?? ""}[redacted]`,
  );
}
