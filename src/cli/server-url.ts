import { UsageError } from "./usage-error.js";

/** `--url`: the http(s) base of a running server; anything else is a usage error (exit 2). */
export function parseServerUrl(raw: string): URL {
  const url = URL.canParse(raw) ? new URL(raw) : null;
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw new UsageError("--url: must be an http:// or https:// URL of the server");
  }
  return url;
}

/**
 * The management key for `--url`: --key, else GATEHOUSE_KEY. A key with a line break or another
 * control character (a pasted line, a file read with its newline) cannot go in a header: it is a
 * usage error naming where it came from, and the key itself is never echoed.
 */
export function serverKey(flag: string | undefined, env: Record<string, string | undefined>): string {
  const key = flag ?? env.GATEHOUSE_KEY;
  if (!key) throw new UsageError("--url: needs --key (or GATEHOUSE_KEY) with a management key");
  // eslint-disable-next-line no-control-regex -- the point is to refuse control characters
  if (/[\u0000-\u001f\u007f]/.test(key)) {
    const where = flag === undefined ? "GATEHOUSE_KEY" : "--key";
    throw new UsageError(`${where}: must not contain control characters (a line break?)`);
  }
  return key;
}

/**
 * Why an answer that is not Gatehouse's JSON envelope is not usable, naming the URL and what came
 * back (`answered 200 with text/html, not Gatehouse's JSON: is --url the address of a Gatehouse
 * server?`): a proxy, another service or a dashboard page on that address.
 */
export function notGatehouseAnswer(url: string, res: Response): string {
  const type = res.headers.get("content-type")?.split(";")[0]?.trim() || "no content type";
  return (
    `${url} answered ${res.status} with ${type}, not Gatehouse's JSON: ` +
    "is --url the address of a Gatehouse server?"
  );
}
