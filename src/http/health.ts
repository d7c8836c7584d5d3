import { createRoute } from '@hono/zod-openapi';
import type { createRouter } from './router.js';
import { HealthSchema, jsonContent } from './schemas.js';

/**
 * Adds `GET /health` to an area's router: 200 `{status:"ok",checks:{database:"ok"}}`, or 503
 * naming the failing check. Each area shares this one implementation.
 */
export function addHealthRoute(router: ReturnType<typeof createRouter>, tag: string) {
  const route = createRoute({
    method: 'get',
    path: '/health',
    tags: [tag],
    summary: `${tag} health`,
    description: 'Checks that the database answers. Never cached.',
    responses: {
      200: jsonContent(HealthSchema, 'Healthy'),
      503: jsonContent(HealthSchema, 'The database is unreachable'),
    },
  });
  router.openapi(route, async (c) => {
    c.header('Cache-Control', 'no-store');
    try {
      await c.var.services.rpc.ping();
      return c.json({ status: 'ok' as const, checks: { database: 'ok' as const } }, 200);
    } catch {
      return c.json({ status: 'unavailable' as const, checks: { database: 'unavailable' as const } }, 503);
    }
  });
}
