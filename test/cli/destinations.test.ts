import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatehouse } from "../helpers/cli.js";

const ID = "2931f161-0f93-471c-8aa9-a74fc06b8805";
const RANGE = ["--from", "2026-11-17T00:00:00Z", "--to", "2026-11-18T00:00:00Z"];

describe("gatehouse destinations replay: bad arguments", () => {
  let dir: string;
  let page: Server;
  let pageUrl: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "gh-destinations-"));
    // Answers every request with an HTML page, as a proxy or another service on the address would.
    page = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<!doctype html><title>Welcome</title>");
    });
    page.listen(0, "127.0.0.1");
    await once(page, "listening");
    pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    page.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("refuses a --from or --to that is not RFC 3339, or a reversed range, with exit 2 before opening anything", async () => {
    const env = { GATEHOUSE_DATA_DIR: dir };
    const replay = (...args: string[]) => gatehouse(["destinations", "replay", "--id", ID, ...args], env);
    const [from, to, dateOnly, reversed] = await Promise.all([
      replay("--from", "yesterday", "--to", "2026-11-18T00:00:00Z"),
      replay("--from", "2026-11-17T00:00:00Z", "--to", ""),
      replay("--from", "2026-11-17", "--to", "2026-11-18T00:00:00Z"),
      replay("--from", "2026-11-18T00:00:00Z", "--to", "2026-11-17T00:00:00Z"),
    ]);
    const format = "must be an RFC 3339 timestamp with seconds (2026-11-18T12:00:00Z)";
    expect(from.stderr).toBe(`gatehouse: --from: ${format}\n`);
    expect(to.stderr).toBe(`gatehouse: --to: ${format}\n`);
    expect(dateOnly.stderr).toBe(`gatehouse: --from: ${format}\n`);
    expect(reversed.stderr).toBe("gatehouse: --to: must be after --from\n");
    for (const r of [from, to, dateOnly, reversed]) expect(r).toMatchObject({ code: 2, stdout: "" });
    expect(existsSync(join(dir, "gatehouse.sqlite"))).toBe(false);
  });

  it("refuses a --url that is not http(s) with exit 2", async () => {
    const [ftp, garbage] = await Promise.all([
      gatehouse(["destinations", "replay", "--id", ID, ...RANGE, "--url", "ftp://x", "--key", "k"], {}),
      gatehouse(["destinations", "replay", "--id", ID, ...RANGE, "--url", "localhost", "--key", "k"], {}),
    ]);
    for (const r of [ftp, garbage]) {
      expect(r).toMatchObject({ code: 2, stdout: "" });
      expect(r.stderr).toBe("gatehouse: --url: must be an http:// or https:// URL of the server\n");
    }
  });

  it("refuses a --key with a line break with exit 2, without echoing it", async () => {
    const run = await gatehouse(
      ["destinations", "replay", "--id", ID, ...RANGE, "--url", pageUrl, "--key", "sk-secret\n"],
      {},
    );
    expect(run).toMatchObject({
      code: 2,
      stdout: "",
      stderr: "gatehouse: --key: must not contain control characters (a line break?)\n",
    });
  });

  it("names the URL and what answered when --url is not a Gatehouse server (exit 1)", async () => {
    const run = await gatehouse(
      ["destinations", "replay", "--id", ID, ...RANGE, "--url", pageUrl, "--key", "k"],
      {},
    );
    expect(run).toMatchObject({ code: 1, stdout: "" });
    expect(run.stderr).toBe(
      `gatehouse: replay: ${pageUrl}/api/v1/observability/destinations/${ID}/replay answered 200 with ` +
        "text/html, not Gatehouse's JSON: is --url the address of a Gatehouse server?\n",
    );
  });
});
