/**
 * R4, the Node floor: the smallest server that does what the API does on the wire. Hono on
 * @hono/node-server plus a postgres.js pool with the API's settings; for each request it runs
 * the statements the API sent for that same request (captured, steady state) and returns the
 * last one's text. No validation, no caller resolution, no rate limits, no logging: API÷R4 is
 * what everything the API adds on top of the bare stack costs. Its pool pipelines like the
 * API's (src/db/pool.ts: max_pipeline = DB_PIPELINE_DEPTH), so both queue calls the same way.
 *
 *   PORT=… DATABASE_URL=… STATEMENTS=file.json node --import tsx bench/passthrough.ts
 *
 * STATEMENTS maps a request key (see `requestKey`) to its statements: {text, params}[], params
 * as bind values (null for SQL NULL).
 */
import { readFileSync } from 'node:fs';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import postgres from 'postgres';
import { loadConfig } from '../src/config.js';

export interface ReplayStatement {
  text: string;
  params: (string | null)[];
}

/** The API's pool settings, defaults included, read from the environment the way the API reads them. */
export const apiPoolSettings = () =>
  loadConfig({ DB_POOL_MAX: process.env.DB_POOL_MAX, DB_PIPELINE_DEPTH: process.env.DB_PIPELINE_DEPTH });

/** Requests that differ only by caller (journeys) differ by their Authorization header. */
export const requestKey = (method: string, pathAndQuery: string, authorization: string | undefined) =>
  `${method} ${pathAndQuery} ${authorization ?? ''}`;

function main() {
  const statements = new Map(Object.entries(JSON.parse(readFileSync(process.env.STATEMENTS!, 'utf8')) as Record<string, ReplayStatement[]>));
  const { DB_POOL_MAX: poolMax, DB_PIPELINE_DEPTH: depth } = apiPoolSettings();
  let inFlight = 0;
  const sql = postgres(process.env.DATABASE_URL!, {
    max: poolMax,
    prepare: true,
    ...({ max_pipeline: depth } as object),
    onnotice: () => undefined,
    connection: { application_name: 'sparkpath-bench-r4' },
  });
  const app = new Hono();
  app.all('*', async (c) => {
    const url = new URL(c.req.url);
    const replay = statements.get(requestKey(c.req.method, url.pathname + url.search, c.req.header('authorization')));
    if (!replay) return c.text('no captured statements for this request', 404);
    let body = '';
    for (const statement of replay) {
      inFlight += 1;
      try {
        const rows = await sql.unsafe(statement.text, statement.params, { prepare: true }).values();
        body = String(rows[0]?.[0] ?? '');
      } finally {
        inFlight -= 1;
      }
    }
    return c.body(body, 200, { 'Content-Type': 'application/json; charset=utf-8' });
  });
  const server = serve({ fetch: app.fetch, port: Number(process.env.PORT), hostname: '127.0.0.1' }, () => console.log('ready'));
  // Requests wrk gave up on (their sockets are closed) may still wait in the pool: let them
  // finish before the pool ends, or they fail with CONNECTION_ENDED.
  process.on('SIGTERM', () => {
    server.close();
    const deadline = Date.now() + 5_000;
    const drained = async () => {
      while (inFlight > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    };
    void drained()
      .then(() => sql.end({ timeout: 1 }))
      .finally(() => process.exit(0));
  });
}

if (process.env.STATEMENTS) main();
