import type { RouteHandler } from '@hono/zod-openapi';
import type { Rpc } from '../../db/rpc.js';
import type { AppEnv } from '../../http/env.js';
import { sendJsonText } from '../../http/respond.js';
import type { enrollInTrail, getUserJourney, listUserJourneys, recordLearningEvent } from './journeys.routes.js';

// The write functions say in the body whether they created the row; the status follows it.
const createdStatus = (body: string) => ((JSON.parse(body) as { created?: unknown }).created === true ? 201 : 200);

export const journeysHandlers = (rpc: Rpc) => {
  const listUserJourneysHandler: RouteHandler<typeof listUserJourneys, AppEnv> = async (c) => {
    const { status, sort } = c.req.valid('query');
    return sendJsonText(c, await rpc.call('list_user_journeys', { status, sort }, c.get('context').db), 200);
  };
  const getUserJourneyHandler: RouteHandler<typeof getUserJourney, AppEnv> = async (c) => {
    const { id } = c.req.valid('param');
    return sendJsonText(c, await rpc.call('get_user_journey', { id }, c.get('context').db), 200);
  };
  const enrollInTrailHandler: RouteHandler<typeof enrollInTrail, AppEnv> = async (c) => {
    const { trail_id } = c.req.valid('json');
    const body = await rpc.call('enroll_in_trail', { trail_id }, c.get('context').db);
    return sendJsonText(c, body, createdStatus(body));
  };
  const recordLearningEventHandler: RouteHandler<typeof recordLearningEvent, AppEnv> = async (c) => {
    const { spark_id, verb, occurred_at } = c.req.valid('json');
    const idempotency_key = c.req.valid('header')['idempotency-key'];
    const body = await rpc.call('record_learning_event', { spark_id, verb, occurred_at, idempotency_key }, c.get('context').db);
    return sendJsonText(c, body, createdStatus(body));
  };
  return {
    listUserJourneys: listUserJourneysHandler,
    getUserJourney: getUserJourneyHandler,
    enrollInTrail: enrollInTrailHandler,
    recordLearningEvent: recordLearningEventHandler,
  };
};
