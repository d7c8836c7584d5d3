import type { RouteHandler } from '@hono/zod-openapi';
import type { AppEnv } from '../../http/env.js';
import { sendJsonText } from '../../http/respond.js';
import type * as routes from './metadata.routes.js';

// Enumerations change only with a migration: let clients and proxies keep them a while.
const CACHE = { 'Cache-Control': 'public, max-age=300' };

export const getMetadata: RouteHandler<typeof routes.getMetadata, AppEnv> = async (c) =>
  sendJsonText(c, await c.var.services.rpc.call('get_metadata', {}, c.var.context.db), 200, CACHE);

export const listDifficultyLevels: RouteHandler<typeof routes.listDifficultyLevels, AppEnv> = async (c) =>
  sendJsonText(c, await c.var.services.rpc.call('list_difficulty_levels', {}, c.var.context.db), 200, CACHE);
