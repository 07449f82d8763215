import { Writable } from "node:stream";
import pino from "pino";
import { describe, expect, it } from "vitest";
import type { FastifyBaseLogger } from "fastify";
import { deferredChildLogger, DeferredChildLogger } from "../../src/http/request-logger.js";

/** A pino logger writing into `lines`, redacting `secret` at any depth one level down. */
function capture(level = "info") {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString("utf8").split("\n")) if (l !== "") lines.push(JSON.parse(l));
      done();
    },
  });
  const logger = pino({ level, redact: { paths: ["secret", "*.secret"], censor: "[redacted]" } }, stream);
  let children = 0;
  const parent = new Proxy(logger, {
    get(target, prop, receiver) {
      if (prop === "child") {
        return (...args: Parameters<typeof logger.child>) => {
          children++;
          return target.child(...args);
        };
      }
      return Reflect.get(target, prop, receiver) as unknown;
    },
  }) as unknown as FastifyBaseLogger;
  return { lines, parent, children: () => children };
}

const strip = (l: Record<string, unknown>) => {
  const { time: _t, pid: _p, hostname: _h, ...rest } = l;
  return rest;
};

describe("request.log made on first use", () => {
  it("makes no pino child until the request logs", () => {
    const c = capture();
    const log = deferredChildLogger(c.parent, { reqId: "r-1" }, {});
    expect(c.children()).toBe(0);
    expect(log.level).toBe("info");
    log.debug("below the level");
    expect(c.children()).toBe(1); // a call makes it, whatever the level
    expect(c.lines).toHaveLength(0);
  });

  it("writes the same lines as pino's own child, bindings and redaction included", () => {
    const c = capture();
    const deferred = deferredChildLogger(c.parent, { reqId: "r-2" }, {});
    const direct = c.parent.child({ reqId: "r-2" }, {});
    for (const log of [deferred, direct]) {
      log.info({ secret: "s3cret", nested: { secret: "s3cret", kept: 1 } }, "hello %s", "there");
      log.warn("plain");
      log.error(new Error("boom"));
    }
    expect(c.lines).toHaveLength(6);
    const [a, b] = [c.lines.slice(0, 3).map(strip), c.lines.slice(3).map(strip)];
    expect(a.map((l) => ({ ...l, err: undefined }))).toEqual(b.map((l) => ({ ...l, err: undefined })));
    expect(a[0]).toMatchObject({
      reqId: "r-2",
      msg: "hello there",
      secret: "[redacted]",
      nested: { secret: "[redacted]", kept: 1 },
    });
    expect(JSON.stringify(c.lines)).not.toContain("s3cret");
    expect((a[2]!.err as { message: string }).message).toBe("boom");
  });

  it("makes its child once, and honours the route's level and later level changes", () => {
    const c = capture();
    const log = deferredChildLogger(c.parent, { reqId: "r-3" }, { level: "warn" }) as DeferredChildLogger;
    expect(log.level).toBe("warn");
    log.info("dropped");
    log.warn("kept");
    log.level = "debug";
    log.debug("now kept");
    expect(c.children()).toBe(1);
    expect(c.lines.map((l) => l.msg)).toEqual(["kept", "now kept"]);
    expect(log.level).toBe("debug");
  });

  it("children of it carry both sets of bindings", () => {
    const c = capture();
    const log = deferredChildLogger(c.parent, { reqId: "r-4" }, {});
    log.child({ store: "sqlite" }).info("from a grandchild");
    expect(c.lines).toEqual([
      expect.objectContaining({ reqId: "r-4", store: "sqlite", msg: "from a grandchild" }),
    ]);
  });
});
