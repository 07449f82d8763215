import type { Api } from "../surfaces/api.js";
import type { BlockedBy, ContentScanner, TextRole } from "./content-scan.js";
import { REQUEST_WALKERS, type TextVisitor } from "./request-texts.js";

/** What scanning a request found, and the request as the provider may see it. */
export interface RequestScan {
  /** The body with every redaction applied: the same object when nothing was redacted. */
  body: unknown;
  /** The blocking filters that matched, once each: any means the request is refused (403). */
  blocked: readonly BlockedBy[];
  /** Flagged matches per label. */
  flags: ReadonlyMap<string, number>;
  /** Redacted matches per label. */
  redactions: ReadonlyMap<string, number>;
  /**
   * The request's text passed `maxChars`: scanning stopped there (what was found so far is
   * reported, the body is not to be forwarded).
   */
  tooLarge: boolean;
}

const NOTHING: ReadonlyMap<string, number> = new Map();

/** Deeper JSON in tool arguments is scanned as its JSON text (it is not walked value by value). */
const MAX_DEPTH = 64;

const count = (m: Map<string, number>, labels: readonly string[]): void => {
  for (const l of labels) m.set(l, (m.get(l) ?? 0) + 1);
};

class Collector implements TextVisitor {
  readonly blocked = new Map<string, BlockedBy>();
  readonly flags = new Map<string, number>();
  readonly redactions = new Map<string, number>();
  /** Characters of text scanned so far. */
  scanned = 0;
  tooLarge = false;
  constructor(
    private readonly scanner: ContentScanner,
    private readonly maxChars: number,
  ) {}

  text(s: string, role: TextRole): string {
    if (this.tooLarge) return s;
    this.scanned += s.length;
    if (this.scanned > this.maxChars) {
      this.tooLarge = true;
      return s;
    }
    const r = this.scanner.scanText(s, role);
    for (const b of r.blocked) this.blocked.set(`${b.guardrailId}\u0000${b.filter}`, b);
    count(this.flags, r.flagged);
    count(this.redactions, r.redactedLabels);
    return r.redacted ?? s;
  }

  /**
   * JSON text is scanned value by value (each string, and each number as its digits), so a
   * redaction leaves valid JSON with the same keys; text that is not JSON is scanned as text.
   */
  jsonText(s: string, role: TextRole): string {
    let parsed: unknown;
    try {
      parsed = JSON.parse(s);
    } catch {
      return this.text(s, role);
    }
    const out = this.json(parsed, role);
    return out === parsed ? s : JSON.stringify(out);
  }

  json(v: unknown, role: TextRole, depth = 0): unknown {
    if (typeof v === "string") return this.text(v, role);
    if (typeof v === "number") {
      const digits = String(v);
      const r = this.text(digits, role);
      return r === digits ? v : r;
    }
    if (typeof v !== "object" || v === null) return v;
    if (depth >= MAX_DEPTH) return this.deep(v, role);
    if (Array.isArray(v)) {
      let out: unknown[] | null = null;
      for (let i = 0; i < v.length; i++) {
        const y = this.json(v[i], role, depth + 1);
        if (y !== v[i]) (out ??= v.slice())[i] = y;
      }
      return out ?? v;
    }
    let out: Record<string, unknown> | null = null;
    for (const [k, x] of Object.entries(v)) {
      const y = this.json(x, role, depth + 1);
      // defineProperty: a `__proto__` key of parsed JSON is an own property, never the prototype.
      if (y !== x)
        Object.defineProperty((out ??= { ...v }), k, {
          value: y,
          writable: true,
          enumerable: true,
          configurable: true,
        });
    }
    return out ?? v;
  }

  /** A value nested too deep to walk: scanned as its JSON text, replaced by that text if redacted. */
  private deep(v: object, role: TextRole): unknown {
    let raw: string;
    try {
      raw = JSON.stringify(v);
    } catch {
      return v;
    }
    const r = this.text(raw, role);
    return r === raw ? v : r;
  }
}

/**
 * Scans every text the model would read in a request body of one API surface (request-texts.ts)
 * with a compiled scanner (content-scan.ts). User-only filters (prompt injection with scan scope
 * `user_only`) read the user's messages only. Never throws and never mutates the body. Text past
 * `maxChars` (all texts together) is not scanned: `tooLarge` says so, and the caller refuses the
 * request rather than forward text no filter read (a bound on the CPU a crafted body can cost).
 */
export function scanRequest(
  body: unknown,
  scanner: ContentScanner,
  opts: { surface: Api; maxChars?: number },
): RequestScan {
  if (scanner.empty) return { body, blocked: [], flags: NOTHING, redactions: NOTHING, tooLarge: false };
  const c = new Collector(scanner, opts.maxChars ?? Infinity);
  const out = REQUEST_WALKERS[opts.surface](body, c);
  return {
    body: out,
    blocked: [...c.blocked.values()],
    flags: c.flags,
    redactions: c.redactions,
    tooLarge: c.tooLarge,
  };
}
