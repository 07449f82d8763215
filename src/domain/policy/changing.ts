import type { Policy } from "./policy.js";

/**
 * Runs a write to a key and then forgets the key, whether or not the write succeeded (a failure
 * after the commit must not leave the old state cached). `hash` as given in a path: lower-cased.
 */
export async function changingKey<T>(policy: Policy, hash: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } finally {
    policy.keyChanged(hash.toLowerCase());
  }
}

/**
 * Runs a write to a workspace (or its budgets) named by a path reference and then forgets the
 * workspace, whether or not the write succeeded. A reference that names nothing known forgets
 * everything (cheap, and such writes are rare).
 */
export async function changingWorkspace<T>(
  policy: Policy,
  organizationId: string,
  ref: string,
  fn: () => Promise<T>,
): Promise<T> {
  const ws = await policy.workspaceByRef(organizationId, ref);
  try {
    return await fn();
  } finally {
    if (ws) policy.workspaceChanged(ws.id);
    else policy.clear();
  }
}

/**
 * Runs a write to an organization's guardrails, their assignments or the keys and members they
 * are assigned to, and then forgets the organization's guardrails, whether or not it succeeded.
 */
export async function changingGuardrails<T>(
  policy: Policy,
  organizationId: string,
  fn: () => Promise<T>,
): Promise<T> {
  try {
    return await fn();
  } finally {
    policy.guardrailsChanged(organizationId);
  }
}
