/**
 * The items in consecutive slices of at most `size` (the last may be shorter): one statement per
 * slice keeps bound values under each engine's limit.
 */
export function* chunksOf<T>(items: readonly T[], size: number): Generator<T[]> {
  if (!Number.isInteger(size) || size < 1) throw new Error("chunksOf: size must be an integer >= 1");
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

/** fn over each slice of at most `size` items, one after the other; the results concatenated. */
export async function flatMapChunks<T, R>(
  items: readonly T[],
  size: number,
  fn: (chunk: T[]) => Promise<readonly R[]>,
): Promise<R[]> {
  const out: R[] = [];
  for (const chunk of chunksOf(items, size)) for (const r of await fn(chunk)) out.push(r);
  return out;
}
