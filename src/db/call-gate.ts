/**
 * At most `limit` database calls in flight; the rest wait here, first come first served.
 *
 * Why not let postgres.js queue them: once every connection is busy, postgres.js pipelines a
 * new query onto a busy connection, behind whatever that connection runs, so a 1 ms read can
 * wait for a 50 ms graph walk while other connections free up. Waiting here, a call takes the
 * first connection that frees. The limit is DB_POOL_MAX × DB_PIPELINE_DEPTH: depth 1 (the
 * default) never pipelines; a larger depth trades that fairness for fewer round trips when
 * all calls are short (docs/benchmarks.md measures both).
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
