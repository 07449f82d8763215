import pg from "pg";
import {
  parsePolicyPayload,
  POLICY_NOTIFY_CHANNEL,
  type PolicyChannel,
  type PolicyChannelHandlers,
} from "../policy-channel.js";

/** application_name of the listening connection (visible in pg_stat_activity). */
export const POLICY_LISTENER_NAME = "gatehouse-policy-listener";

export interface PgPolicyChannelOptions {
  /** How often the listening connection is checked; a check unanswered within this is a loss. */
  heartbeatMs?: number;
  /** Longest wait between reconnection attempts. */
  maxBackoffMs?: number;
  /** Told of losses and reconnections (the logger). */
  onEvent?: (event: "lost" | "listening", err?: unknown) => void;
}

/**
 * Policy changes from other instances over PostgreSQL LISTEN/NOTIFY on a dedicated connection
 * (the triggers of migration 008 send them when a change commits).
 *
 * A lost connection is reported at once (down), then re-opened with backoff; `up` follows a
 * successful LISTEN. A connection that silently stops answering is caught by a heartbeat
 * (`select 1` every heartbeatMs, a loss if unanswered within heartbeatMs). The connection needs
 * session semantics: a direct connection or a session-pooling PgBouncer, not transaction pooling.
 */
export function pgPolicyChannel(url: string, opts: PgPolicyChannelOptions = {}): PolicyChannel {
  const heartbeatMs = opts.heartbeatMs ?? 500;
  const maxBackoffMs = opts.maxBackoffMs ?? 2_000;
  let handlers: PolicyChannelHandlers | null = null;
  let client: pg.Client | null = null;
  let closed = false;
  let backoff = 50;
  let heartbeat: NodeJS.Timeout | null = null;
  let retry: NodeJS.Timeout | null = null;

  const lose = (c: pg.Client, err?: unknown) => {
    if (client !== c) return; // already handled
    client = null;
    if (heartbeat) clearInterval(heartbeat);
    heartbeat = null;
    c.removeAllListeners("notification");
    c.on("error", () => undefined);
    void c.end().catch(() => undefined);
    if (closed) return;
    handlers?.down();
    opts.onEvent?.("lost", err);
    retry = setTimeout(connect, backoff);
    retry.unref();
    backoff = Math.min(maxBackoffMs, backoff * 2);
  };

  const connect = () => {
    retry = null;
    if (closed) return;
    const c = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: 5_000,
      keepAlive: true,
      application_name: POLICY_LISTENER_NAME,
    });
    client = c;
    c.on("error", (err) => lose(c, err));
    c.on("end", () => lose(c));
    c.on("notification", (n) => {
      const change = parsePolicyPayload(n.payload);
      if (change) handlers?.change(change);
    });
    void (async () => {
      try {
        await c.connect();
        await c.query(`LISTEN ${POLICY_NOTIFY_CHANNEL}`);
      } catch (err) {
        lose(c, err);
        return;
      }
      if (client !== c || closed) return;
      backoff = 50;
      handlers?.up();
      opts.onEvent?.("listening");
      let inFlight = false;
      heartbeat = setInterval(() => {
        if (inFlight) return lose(c, new Error("policy channel heartbeat unanswered"));
        inFlight = true;
        c.query("select 1").then(
          () => (inFlight = false),
          (err: unknown) => lose(c, err),
        );
      }, heartbeatMs);
      heartbeat.unref();
    })();
  };

  return {
    subscribe(h) {
      handlers = h;
      connect();
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      if (heartbeat) clearInterval(heartbeat);
      const c = client;
      client = null;
      if (c) await c.end().catch(() => undefined);
    },
  };
}
