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
