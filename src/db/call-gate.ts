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
 * The pool size decides how many backends run at once, and on a 2-core machine shared with
 * Postgres, more than about 2 per core only makes them (and this process) queue for the CPU:
 * a request then waits a whole scheduler slice now and then. Measured the same day (depth 2,
 * wrk, one request variant per family), p95 at 8 connections / req/s at 32 connections:
 *
 *   pool | journeys list  | graph depth 3 | autocomplete  | search        | path
 *    10  | 8.4-9 / 2350   | 6-11 / 2850   | 20-26 / 1900  | 18.5 / 1010   | 22-24 / 665
 *     6  | 11 / 2300      | 8.3 / 2900    | 15.6 / 1940   | 18.5 / 1000   |
 *     4  | 8.5-9.5 / 2440 | 10.7 / 2790   | 8.5-9 / 2080  | 19-20 / 1030  | 25-30 / 650
 *     3  | 9.0 / 2160     | 9.5-9.9 / 2400| 9.6-9.7 / 1900| 12-12.5 / 1050| 18 / 730
 *     2  | 7.1-7.3 / 1940 | 6.1-6.8 / 2200| 7.4-7.6 / 1700| 12-12.6 / 980 |
 *
 * Hence the default DB_POOL_MAX of 2 × this host's cores (src/config.ts): right when Postgres
 * runs here (the embedded default); with a database server of its own, set it to about twice
 * that server's cores.
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
