/** A mistake in how the command was called (bad argument or option): exit code 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** Exit codes: 0 success, 1 failure, 2 usage or configuration error. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;
