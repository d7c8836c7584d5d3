/**
 * The mixed workload shared by the soak and outage tests: reads of every parameterless GET
 * family that exists on this branch, plus learning-event writes (POST /user/me/events) once
 * that route exists. Each acknowledged write is remembered so the test can check it is stored.
 */
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import type postgres from 'postgres';
import { insertCatalog } from '../helpers/content.js';
import { JWT_SECRET, openApiRoutes, timedRequest, type Outcome } from './harness.js';

export interface Workload {
  reads: string[];
  writes: boolean;
  acked: { key: string }[];
  userId: string;
  next(i: number): Promise<Outcome>;
  /** Acknowledged writes that are not in the database. */
  missingWrites(sql: postgres.Sql): Promise<number>;
}

export async function userToken(userId: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ role: 'authenticated', user_role: 'learner', subscription_plan: 'premium', email: 'soak@example.com' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(userId)
    .setAudience('authenticated')
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .sign(new TextEncoder().encode(JWT_SECRET));
}

const CANDIDATE_READS = [
  '/metadata',
  '/metadata/difficulty-levels',
  '/metadata/health',
  '/discovery/domains',
  '/discovery/trails',
  '/discovery/all',
  '/discovery/facets',
  '/snapshots/current',
  '/user/me/journeys',
  '/auth/session',
  '/search?q=data',
  '/search/autocomplete?q=da',
];

export async function prepareWorkload(baseUrl: string, sql: postgres.Sql): Promise<Workload> {
  const routes = await openApiRoutes(baseUrl);
  const reads = CANDIDATE_READS.filter((p) => routes.has(`GET ${p.split('?')[0]}`));
  const userId = randomUUID();
  const token = await userToken(userId);
  const auth = { Authorization: `Bearer ${token}` };

  // A published catalog to read and to record events against (unless the seed brought one).
  const [{ published }] = await sql<{ published: boolean }[]>`select exists (select 1 from app.snapshots where status = 'published') as published`;
  if (!published) {
    await insertCatalog(sql, {
      domains: [{ slug: 'soak-domain', trails: [{ slug: 'soak-trail', concepts: [{ slug: 'soak-concept', sparks: ['soak-a', 'soak-b', 'soak-c'] }] }] }],
    }, { status: 'published' });
  }
  const sparks = (await sql<{ id: string }[]>`
    select id from app.sparks where snapshot_id = private.resolve_snapshot_id(null) order by slug limit 20`).map((r) => r.id);
  const writes = routes.has('POST /user/me/events') && sparks.length > 0;

  const acked: { key: string }[] = [];
  const workload: Workload = {
    reads,
    writes,
    acked,
    userId,
    async next(i) {
      if (writes && i % 4 === 0) {
        const key = randomUUID();
        const outcome = await timedRequest(`${baseUrl}/user/me/events`, {
          method: 'POST',
          headers: { ...auth, 'Content-Type': 'application/json', 'Idempotency-Key': key },
          body: JSON.stringify({ spark_id: sparks[i % sparks.length], verb: i % 8 === 0 ? 'completed' : 'started' }),
          tag: 'write',
        });
        if (outcome.status === 200 || outcome.status === 201) acked.push({ key });
        return outcome;
      }
      const path = reads[i % reads.length];
      return timedRequest(`${baseUrl}${path}`, { headers: auth, tag: path });
    },
    async missingWrites(db) {
      if (acked.length === 0) return 0;
      const [{ stored }] = await db<{ stored: string }[]>`
        select count(*) as stored from app.learning_events where user_id = ${userId}`;
      // A write whose answer was lost may be stored too, so stored >= acknowledged.
      return Math.max(acked.length - Number(stored), 0);
    },
  };
  return workload;
}
