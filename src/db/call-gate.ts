/**
 * At most `limit` database calls in flight; the rest wait here, first come first served.
 *
 * Why not let postgres.js queue them all: once every connection is busy, postgres.js pipelines
 * a new query onto a busy connection, behind whatever that connection runs, so a 1 ms read can
 * wait for a 50 ms graph walk while other connections free up. Waiting here, a call takes the
 * first connection that frees. The limit is DB_POOL_MAX × DB_PIPELINE_DEPTH. Pipelining saves
 * round trips (fewer socket writes on both sides), which is what a saturated machine runs out
 * of. Measured 2026-11-22 on the 2-core bench machine, pool 10, base dataset, wrk:
 *
 *   depth | /metadata alone, 32 conns | /metadata (24 conns) next to depth-10 graph reads (8)
 *     1   | 5.5k req/s                | 2.2k req/s, p50 10 ms, p99 32 ms
 *     2   | 6.7k req/s                | 2.4k req/s, p50  9 ms, p99 52 ms
 *     4   | 6.9k req/s                | 3.0k req/s, p50  8 ms, p99 88 ms
 *
 * The default, 2, takes most of the throughput while a short call waits behind at most one
 * other call on its connection.
 *
 * History: this gate first worked around the postgres.js 3.4.9 queue that leaked a hole per
 * handed-out query (15k → 6k statements/s within 40 s of sustained load); that queue is now
 * patched at install (patches/postgres+3.4.9.patch, test/db/postgres-queue-patch.test.ts).
 */
export interface GateSlot {
  /** Resolves once the call may run. */
  readonly ready: Promise<void>;
  /** Gives the slot back, or gives up waiting for one. Safe to call more than once. */
  leave(): void;
}

interface Waiter {
  admit: () => void;
  cancelled: boolean;
}

export class CallGate {
  private active = 0;
  private waiters: (Waiter | undefined)[] = [];
  private head = 0;

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('the call gate needs a limit of at least 1');
  }

  get inFlight(): number {
    return this.active;
  }

  get waiting(): number {
    let count = 0;
    for (let i = this.head; i < this.waiters.length; i++) if (!this.waiters[i]!.cancelled) count++;
    return count;
  }

  enter(): GateSlot {
    let state: 'waiting' | 'admitted' | 'left' = 'waiting';
    let admit!: () => void;
    const ready = new Promise<void>((resolve) => (admit = resolve));
    const waiter: Waiter = {
      cancelled: false,
      admit: () => {
        state = 'admitted';
        admit();
      },
    };
    this.waiters.push(waiter);
    this.admitNext();
    return {
      ready,
      leave: () => {
        if (state === 'admitted') {
          state = 'left';
          this.active -= 1;
          this.admitNext();
        } else if (state === 'waiting') {
          // Never admitted (its deadline passed): skipped when its turn comes.
          state = 'left';
          waiter.cancelled = true;
        }
      },
    };
  }

  private admitNext() {
    while (this.active < this.limit && this.head < this.waiters.length) {
      const next = this.waiters[this.head]!;
      this.waiters[this.head++] = undefined;
      if (next.cancelled) continue;
      this.active += 1;
      next.admit();
    }
    // Compact here, unlike the queue this replaces: the array never outgrows what is waiting.
    if (this.head === this.waiters.length) {
      this.waiters = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.waiters.length) {
      this.waiters = this.waiters.slice(this.head);
      this.head = 0;
    }
  }
}
