/*
 * The port through which policy changes made by other instances arrive (the policy cache,
 * src/domain/policy/, subscribes), and the message format the triggers of migration 008 send.
 * Here, below the domain, because the store's PostgreSQL adapter (postgres/pg-policy-channel.ts)
 * implements it.
 */

/** A change to policy somewhere in the cluster. */
export interface PolicyChange {
  kind: "key" | "workspace" | "guardrails";
  /** Key hash, workspace id, or (guardrails: any guardrail, assignment or member) organization id. */
  id: string;
}

export interface PolicyChannelHandlers {
  change(c: PolicyChange): void;
  /** The channel is (again) listening: changes from now on will arrive. */
  up(): void;
  /** The channel was lost: changes may be missed until up() is called again. */
  down(): void;
  /** Something changed, but what is not known (another process wrote to SQLite): drop everything. */
  unknownChange(): void;
}

/** Where other instances' policy changes arrive from (pg-policy-channel.ts, sqlite-change-channel.ts). */
export interface PolicyChannel {
  subscribe(h: PolicyChannelHandlers): void;
  close(): Promise<void>;
}

/** The PostgreSQL NOTIFY channel, written by the triggers of migration 008. */
export const POLICY_NOTIFY_CHANNEL = "gatehouse_policy";

/** A NOTIFY payload: `key:<hash>`, `workspace:<id>` or `guardrails:<organization>`; anything else is null. */
export function parsePolicyPayload(payload: string | undefined): PolicyChange | null {
  const m = /^(key|workspace|guardrails):(.+)$/.exec(payload ?? "");
  return m ? { kind: m[1] as PolicyChange["kind"], id: m[2]! } : null;
}
