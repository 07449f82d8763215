/**
 * The outbox batches a delivery worker decoded most recently, by sequence number, bounded both in
 * number and in size (the length of their stored JSON, a proxy for what the decoded objects hold):
 * a batch can carry up to a thousand generations with their prompts and completions, so a count
 * alone could keep gigabytes. The oldest go first; a batch larger than the whole bound is not kept.
 */
export class BatchCache<B> {
  private readonly entries = new Map<number, { batch: B; size: number }>();
  private held = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxSize: number,
  ) {}

  get(seq: number): B | undefined {
    return this.entries.get(seq)?.batch;
  }

  has(seq: number): boolean {
    return this.entries.has(seq);
  }

  /** The sum of the sizes of the batches kept. */
  get size(): number {
    return this.held;
  }

  get count(): number {
    return this.entries.size;
  }

  remember(seq: number, batch: B, size: number): void {
    this.forget(seq);
    if (size > this.maxSize) return;
    this.entries.set(seq, { batch, size });
    this.held += size;
    while (this.entries.size > this.maxEntries || this.held > this.maxSize) {
      this.forget(this.entries.keys().next().value as number);
    }
  }

  private forget(seq: number): void {
    const e = this.entries.get(seq);
    if (e === undefined) return;
    this.entries.delete(seq);
    this.held -= e.size;
  }
}
