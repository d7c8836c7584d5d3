import { createRoute } from '@hono/zod-openapi';
import type { createRouter } from './router.js';
import { HealthSchema, jsonContent } from './schemas.js';

/**
 * Adds `GET /health` to an area's router: 200 `{status:"ok",checks:{database:"ok",sessions:"ok"}}`,
 * or 503 naming the failing check (`sessions`: what sign-in, refresh, logout and cleanup need;
 * `data_api`, with DATA_API=supabase: what every request goes through).
 * Each area shares this one implementation.
 */
export function addHealthRoute(router: ReturnType<typeof createRouter>, tag: string) {
  const route = createRoute({
    method: 'get',
    path: '/health',
    tags: [tag],
    summary: `${tag} health`,
    description: 'Checks that the database answers, that the session functions sign-in needs run on the same pool and, with DATA_API=supabase, that the project\'s Data API answers. Never cached.',
    responses: {
      200: jsonContent(HealthSchema, 'Healthy'),
      503: jsonContent(HealthSchema, 'The database (or the session functions) cannot be reached'),
    },
  });
  router.openapi(route, async (c) => {
    c.header('Cache-Control', 'no-store');
    const checks = await c.var.services.rpc.health();
    if (checks.database === 'ok' && checks.sessions === 'ok' && checks.data_api !== 'unavailable') return c.json({ status: 'ok' as const, checks }, 200);
    return c.json({ status: 'unavailable' as const, checks }, 503);
  });
}
