import type { RouteHandler } from '@hono/zod-openapi';
import type { AppEnv } from '../../http/env.js';
import { sendCreatedOrExisting, sendJsonText } from '../../http/respond.js';
import type * as routes from './learning.routes.js';

export const listNextSparks: RouteHandler<typeof routes.listNextSparks, AppEnv> = async (c) => {
  const { trail, limit } = c.req.valid('query');
  return sendJsonText(c, await c.var.services.rpc.call('list_next_sparks', { trail, limit_count: limit }, c.var.context.db), 200);
};

export const listDueReviews: RouteHandler<typeof routes.listDueReviews, AppEnv> = async (c) => {
  const { due_before, limit } = c.req.valid('query');
  return sendJsonText(c, await c.var.services.rpc.call('list_due_reviews', { due_before, limit_count: limit }, c.var.context.db), 200);
};

export const recordReview: RouteHandler<typeof routes.recordReview, AppEnv> = async (c) => {
  const { spark_id, rating, reviewed_at } = c.req.valid('json');
  const idempotency_key = c.req.valid('header')['idempotency-key'];
  const body = await c.var.services.rpc.call('record_review', { spark_id, rating, reviewed_at, idempotency_key }, c.var.context.db);
  return sendCreatedOrExisting(c, body);
};

export const voidLearningEvent: RouteHandler<typeof routes.voidLearningEvent, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  return sendJsonText(c, await c.var.services.rpc.call('void_learning_event', { id }, c.var.context.db), 200);
};

export const listStatements: RouteHandler<typeof routes.listStatements, AppEnv> = async (c) => {
  const { since, until, limit, cursor } = c.req.valid('query');
  const body = await c.var.services.rpc.call('list_statements', { since, until, limit_count: limit, cursor }, c.var.context.db);
  return sendJsonText(c, body, 200, { 'X-Experience-API-Version': '1.0.3' });
};
