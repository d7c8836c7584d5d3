import type postgres from 'postgres';

/**
 * What a database's busy backends were doing during the kept runs: pg_stat_activity sampled at
 * a fixed pace, each active client backend counted once per sample under its wait event, or
 * under CPU when it waited on nothing. A side whose latency grows without its CPU (the 10x
 * catalog read from disk when the host's page cache has let it go) shows it here as IO.
 */
export interface WaitCounts {
  /** Samples taken. */
  samples: number;
  /** Active client backends seen, summed over the samples. */
  active: number;
  /** Those backends by what they waited on: 'CPU', or '<wait_event_type>:<wait_event>'. */
  by: Record<string, number>;
}

export interface WaitRow {
  wait_event_type: string | null;
  wait_event: string | null;
}

/** Adds one sample's active backends to the counts. */
export function countSample(counts: WaitCounts, rows: WaitRow[]): void {
  counts.samples++;
  for (const row of rows) {
    const key = row.wait_event_type ? `${row.wait_event_type}:${row.wait_event}` : 'CPU';
    counts.active++;
    counts.by[key] = (counts.by[key] ?? 0) + 1;
  }
}

/** The share of active backends waiting on a wait event type (IO, Lock, LWLock, ...), or on nothing ('CPU'). */
export function waitShare(counts: WaitCounts | undefined, type: string): number | undefined {
  if (!counts || counts.active === 0) return undefined;
  const matching = Object.entries(counts.by).filter(([key]) => key === type || key.startsWith(`${type}:`));
  return matching.reduce((sum, [, n]) => sum + n, 0) / counts.active;
}

/** The wait events that took the largest shares, largest first. */
export function topWaits(counts: WaitCounts, limit = 3): { event: string; share: number }[] {
  return Object.entries(counts.by)
    .filter(([key]) => key !== 'CPU')
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, limit)
    .map(([event, n]) => ({ event, share: n / counts.active }));
}

/** Samples taken around each kept run of a side (bench/measure.ts), added up over its runs. */
export interface RunSampler {
  start(): void;
  stop(): Promise<void>;
}

/**
 * Samples the active client backends of one database every `everyMs` while started. `sql` is a
 * connection of its own (its own backend is left out, and so is every other database's).
 */
export function waitSampler(sql: postgres.Sql, database: string, everyMs = 50): RunSampler & { counts: WaitCounts } {
  const counts: WaitCounts = { samples: 0, active: 0, by: {} };
  let running: Promise<void> | undefined;
  let stopping = false;
  const loop = async () => {
    while (!stopping) {
      const began = performance.now();
      const rows = await sql<WaitRow[]>`
        select wait_event_type, wait_event from pg_catalog.pg_stat_activity
        where datname = ${database} and state = 'active' and backend_type = 'client backend' and pid <> pg_catalog.pg_backend_pid()`;
      countSample(counts, rows);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, everyMs - (performance.now() - began))));
    }
  };
  return {
    counts,
    start() {
      stopping = false;
      running = loop();
    },
    async stop() {
      stopping = true;
      await running;
    },
  };
}
