import type { RouteHandler } from '@hono/zod-openapi';
import type { AppEnv } from '../../http/env.js';
import { sendCreatedOrExisting, sendJsonText } from '../../http/respond.js';
import type * as routes from './journeys.routes.js';

export const listUserJourneys: RouteHandler<typeof routes.listUserJourneys, AppEnv> = async (c) => {
  const { status, sort } = c.req.valid('query');
  return sendJsonText(c, await c.var.services.rpc.call('list_user_journeys', { status, sort }, c.var.context.db), 200);
};

export const getUserJourney: RouteHandler<typeof routes.getUserJourney, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  return sendJsonText(c, await c.var.services.rpc.call('get_user_journey', { id }, c.var.context.db), 200);
};

export const enrollInTrail: RouteHandler<typeof routes.enrollInTrail, AppEnv> = async (c) => {
  const { trail_id } = c.req.valid('json');
  const body = await c.var.services.rpc.call('enroll_in_trail', { trail_id }, c.var.context.db);
  return sendCreatedOrExisting(c, body);
};

export const recordLearningEvent: RouteHandler<typeof routes.recordLearningEvent, AppEnv> = async (c) => {
  const { spark_id, verb, occurred_at } = c.req.valid('json');
  const idempotency_key = c.req.valid('header')['idempotency-key'];
  const body = await c.var.services.rpc.call('record_learning_event', { spark_id, verb, occurred_at, idempotency_key }, c.var.context.db);
  return sendCreatedOrExisting(c, body);
};
