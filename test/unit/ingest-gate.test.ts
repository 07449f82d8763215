import { describe, expect, it } from "vitest";
import { IngestGate } from "../../src/domain/ingest/ingest-gate.js";

const tick = () => new Promise((r) => setTimeout(r, 5));

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((a, b) => {
    resolve = a;
    reject = b;
  });
  return { promise, resolve, reject };
}

describe("IngestGate: batches run together, recovery runs alone", () => {
  it("recovers once before the first batches (a previous process may have died mid-batch)", async () => {
    const gate = new IngestGate();
    let recoveries = 0;
    const recover = async () => {
      recoveries += 1;
      await tick();
    };
    await Promise.all([gate.enter(recover), gate.enter(recover), gate.enter(recover)]);
    expect(recoveries).toBe(1);
    for (let i = 0; i < 3; i++) gate.leave();
    await gate.enter(recover);
    gate.leave();
    expect(recoveries).toBe(1);
  });

  it("after a batch fails once its activity commit began, recovers after the batches in flight and before new ones", async () => {
    const gate = new IngestGate();
    const log: string[] = [];
    const recover = async () => {
      log.push("recover");
    };
    await gate.enter(recover); // batch A
    await gate.enter(recover); // batch B
    log.length = 0;
    await expect(
      gate.commit(async (before) => {
        await before();
        throw new Error("record-store commit failed");
      }),
    ).rejects.toThrow(/commit failed/);
    gate.leave(); // A done (failed)
    const c = gate.enter(recover).then(() => log.push("C entered"));
    await tick();
    expect(log).toEqual([]); // B still in flight: no recovery yet, C waits
    log.push("B leaves");
    gate.leave();
    await c;
    expect(log).toEqual(["B leaves", "recover", "C entered"]);
    gate.leave();
  });

  it("a failure before the activity commit needs no recovery", async () => {
    const gate = new IngestGate();
    let recoveries = 0;
    const recover = async () => {
      recoveries += 1;
    };
    await gate.enter(recover);
    await expect(
      gate.commit(async () => {
        throw new Error("claim failed");
      }),
    ).rejects.toThrow(/claim failed/);
    gate.leave();
    await gate.enter(recover);
    gate.leave();
    expect(recoveries).toBe(1);
  });

  it("a batch about to commit waits for batches already committing, and refuses when one failed", async () => {
    const gate = new IngestGate();
    await gate.enter(async () => undefined);
    await gate.enter(async () => undefined);
    await gate.enter(async () => undefined);
    const aCommit = deferred();
    const aStarted = deferred();
    const a = gate.commit(async (before) => {
      await before();
      aStarted.resolve();
      await aCommit.promise; // A's activity commit done, record-store commit pending
      throw new Error("A: record-store commit failed");
    });
    await aStarted.promise;
    let bCommitted = false;
    const b = gate.commit(async (before) => {
      await before();
      bCommitted = true;
    });
    await tick();
    expect(bCommitted).toBe(false); // B waits for A's outcome
    aCommit.resolve();
    await expect(a).rejects.toThrow(/A: record-store/);
    await expect(b).rejects.toThrow(/concurrent batch failed/);
    expect(bCommitted).toBe(false);
    // A successful neighbour lets the next one through.
    const c = gate.commit(async (before) => {
      await before();
      return "c";
    });
    await expect(c).rejects.toThrow(/concurrent batch failed/); // recovery is still due
    gate.leave();
    gate.leave();
    gate.leave();
    let recovered = false;
    await gate.enter(async () => {
      recovered = true;
    });
    expect(recovered).toBe(true);
    await expect(gate.commit(async (before) => (await before(), "ok"))).resolves.toBe("ok");
    gate.leave();
  });

  it("a failed recovery fails the batch that ran it and is retried by the next", async () => {
    const gate = new IngestGate();
    let attempts = 0;
    const recover = async () => {
      attempts += 1;
      if (attempts === 1) throw new Error("activity store unavailable");
    };
    await expect(gate.enter(recover)).rejects.toThrow(/unavailable/);
    await gate.enter(recover);
    gate.leave();
    expect(attempts).toBe(2);
  });
});
