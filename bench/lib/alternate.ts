/**
 * A baseline and a candidate measured in the same run, alternating (A B, B A, A B, …) so that
 * neither always runs first on a machine whose speed drifts, after one unmeasured run of each
 * (JIT, caches). Returns each side's results, in round order.
 */
export async function alternate<T>(
  rounds: number,
  base: (round: number) => Promise<T>,
  next: (round: number) => Promise<T>,
): Promise<[T[], T[]]> {
  await base(-1);
  await next(-1);
  const a: T[] = [];
  const b: T[] = [];
  for (let r = 0; r < rounds; r++) {
    if (r % 2 === 0) {
      a.push(await base(r));
      b.push(await next(r));
    } else {
      b.push(await next(r));
      a.push(await base(r));
    }
  }
  return [a, b];
}
