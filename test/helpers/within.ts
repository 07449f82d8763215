/** Polls fn every 10 ms until it returns true; the elapsed ms, or Infinity after `ms`. */
export async function within(ms: number, fn: () => Promise<boolean>): Promise<number> {
  const t0 = performance.now();
  while (performance.now() - t0 < ms) {
    if (await fn()) return performance.now() - t0;
    await new Promise((r) => setTimeout(r, 10));
  }
  return Infinity;
}
