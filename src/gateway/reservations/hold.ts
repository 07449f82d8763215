import type { HoldPlan } from "./enforcement.js";
import type { ReservationStore } from "./reservation-store.js";
import type { HoldRequest, Room } from "./room.js";

/**
 * One attempt's hold, finished exactly once: the first settle or release wins and every later
 * call (another exit path: client abort, upstream abort, timeout, error) awaits the same result.
 */
export class HoldHandle {
  private done: Promise<void> | null = null;
  constructor(
    private readonly holds: Holds,
    readonly id: string,
    readonly plan: HoldPlan,
  ) {}

  get finished(): boolean {
    return this.done !== null;
  }

  /**
   * Records the charge (the generation record), then drops the hold. `chargedNano`: what the
   * record adds where the hold counts (cost plus BYOK cost; see ReservationStore).
   */
  settle(charge: () => Promise<void>, chargedNano: bigint): Promise<void> {
    this.done ??= this.holds.finish(this.id, () => this.holds.store.settle(this.id, charge, chargedNano));
    return this.done;
  }

  release(): Promise<void> {
    this.done ??= this.holds.finish(this.id, () => this.holds.store.release(this.id));
    return this.done;
  }
}

/** The live holds of this instance, renewed every third of their lifetime until finished. */
export class Holds {
  private readonly live = new Set<string>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly store: ReservationStore,
    ttlMs: number,
  ) {
    this.timer = setInterval(
      () => {
        void this.store.renew([...this.live]).catch(() => undefined);
      },
      Math.max(100, Math.floor(ttlMs / 3)),
    );
    this.timer.unref();
  }

  async take(req: HoldRequest, decide: (room: Room) => HoldPlan): Promise<HoldHandle> {
    const plan = await this.store.reserve(req, decide);
    this.live.add(req.id);
    return new HoldHandle(this, req.id, plan);
  }

  /** @internal */
  async finish(id: string, fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } finally {
      this.live.delete(id);
    }
  }

  get liveCount(): number {
    return this.live.size;
  }

  close(): void {
    clearInterval(this.timer);
  }
}
