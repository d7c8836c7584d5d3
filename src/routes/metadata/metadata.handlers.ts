import type { Context } from 'hono';
import type { Rpc } from '../../db/rpc.js';
import type { AppEnv } from '../../http/env.js';
import { sendJsonText } from '../../http/respond.js';

// Enumerations change only with a migration: let clients and proxies keep them a while.
const CACHE = { 'Cache-Control': 'public, max-age=300' };

export const metadataHandlers = (rpc: Rpc) => ({
  getMetadata: async (c: Context<AppEnv>) =>
    sendJsonText(c, await rpc.call('get_metadata', {}, c.get('context').db), 200, CACHE),
  listDifficultyLevels: async (c: Context<AppEnv>) =>
    sendJsonText(c, await rpc.call('list_difficulty_levels', {}, c.get('context').db), 200, CACHE),
});
