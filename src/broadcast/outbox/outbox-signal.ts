/**
 * In-process wake-up of the Broadcast worker after a transaction wrote to the outbox, so that
 * delivery starts at once rather than at the next poll. Other instances find the rows by polling.
 */
const listeners = new Set<() => void>();

export function onOutboxWrite(fn: () => void): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

export function signalOutboxWrite(): void {
  for (const fn of listeners) fn();
}
