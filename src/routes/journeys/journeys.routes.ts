import { createRoute, z } from '@hono/zod-openapi';
import { requirePermission } from '../../context/middleware.js';
import { requireBearerToken } from '../../auth/bearer-only.js';
import { commonErrors, Difficulty, errorResponse, jsonContent, Text, Uuid } from '../../http/schemas.js';

/** Contracts of /user/me/journeys and /user/me/events. Progress is derived in SQL (docs/journeys.md). */

export const JOURNEY_STATUSES = ['not_started', 'in_progress', 'completed'] as const;
export const JOURNEY_SORTS = ['recent', 'progress', 'started'] as const;
const JourneyStatus = z.enum(JOURNEY_STATUSES);
const SparkStatus = z.enum(JOURNEY_STATUSES);
export const Timestamp = z.string().openapi({ format: 'date-time', example: '2026-11-22T10:15:00.123+00:00' });

const TrailSummary = z
  .object({ id: Uuid, title: z.string(), slug: z.string(), difficulty_level: Difficulty.nullable() })
  .openapi('TrailSummary');

const ConceptSummary = z.object({ id: Uuid, title: z.string(), slug: z.string() }).openapi('ConceptSummary');

const SparkProgress = z
  .object({ spark_id: Uuid, title: z.string(), status: SparkStatus, completed_at: Timestamp.nullable() })
  .openapi('SparkProgress');

export const UserJourneyListItem = z
  .object({
    id: Uuid.openapi({ description: 'Enrollment id' }),
    user_id: Uuid,
    trail_id: Uuid,
    status: JourneyStatus,
    progress_percent: z.number().int().min(0).max(100).openapi({ description: 'floor(100 * completed_sparks / total_sparks); 0 when the trail has no sparks' }),
    started_at: Timestamp,
    completed_at: Timestamp.nullable().openapi({ description: 'When the last spark was completed; null unless status is completed' }),
    last_activity_at: Timestamp.openapi({ description: 'Latest learning event on the trail\'s sparks; started_at when there is none' }),
    completed_sparks: z.number().int(),
    total_sparks: z.number().int(),
    trail: TrailSummary,
    content_changed_since_enrollment: z.boolean().openapi({
      description: 'Beyond the spec: the trail (its concepts, sparks, links or beacons) changed between the snapshot current at enrollment and the one this journey is read from',
    }),
    content_changes_url: z.string().nullable().openapi({
      description: 'When it changed: the change list, /snapshots/{id}/changes?since=<enrollment snapshot>&trail=<trail id>; else null',
      example: '/snapshots/3f1c2d4e-5b6a-4c7d-8e9f-0a1b2c3d4e5f/changes?since=9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d&trail=1f8f3cf2-a0a1-34a0-957e-60a995ebd7ff',
    }),
  })
  .openapi('UserJourneyListItem');

export const UserJourneyDetail = UserJourneyListItem.extend({
  current_concept: ConceptSummary.nullable().openapi({ description: 'First concept (by order) with an incomplete spark; null when all are completed' }),
  spark_progress: z.array(SparkProgress).openapi({ description: 'One entry per distinct spark of the trail, in trail order' }),
}).openapi('UserJourneyDetail');

const EnrollmentResult = UserJourneyDetail.extend({
  created: z.boolean().openapi({ description: 'true when this request created the enrollment (201), false when it already existed (200)' }),
}).openapi('EnrollmentResult');

export const LearningEvent = z
  .object({
    id: Uuid,
    user_id: Uuid,
    spark_id: Uuid,
    verb: z.string(),
    occurred_at: Timestamp,
    recorded_at: Timestamp,
    idempotency_key: z.string().nullable(),
    voided_at: Timestamp.nullable().openapi({ description: 'When the learner voided it (POST /user/me/events/{id}/void); a voided event counts for nothing' }),
    created: z.boolean().openapi({ description: 'true when this request recorded the event (201), false when an earlier identical event was returned (200)' }),
  })
  .openapi('LearningEvent');

/** The optional Idempotency-Key of the learner's writes (events, reviews): 1-200 characters, unique per user. */
export const IdempotencyKeyHeader = z.object({
  'idempotency-key': Text(1, 200).optional().openapi({ description: 'Client-chosen key, unique per user; 1-200 characters' }),
});

// The spec: Authorization: Bearer on every /user request; the access-token cookie is refused.
export const security: Record<string, string[]>[] = [{ bearerAuth: [] }];
export const bearerOnly = requireBearerToken();
export const authErrors = {
  401: errorResponse('UNAUTHORIZED: the bearer token is missing, invalid or expired (the access-token cookie alone is not accepted: details.reason bearer_required)'),
  403: errorResponse('FORBIDDEN: service callers (and callers without the permission) cannot use /user/me'),
} as const;

export const listUserJourneys = createRoute({
  method: 'get',
  path: '/me/journeys',
  operationId: 'listUserJourneys',
  tags: ['Journeys'],
  summary: "The caller's journeys",
  description:
    'Every trail enrollment of the signed-in user with progress derived from their learning events. ' +
    'Sorts are descending: recent = last_activity_at, progress = completed/total ratio, started = started_at. Never cached.',
  security,
  middleware: [bearerOnly, requirePermission('TRACK_PROGRESS')] as const,
  request: {
    query: z.object({
      status: JourneyStatus.optional().openapi({ description: 'Only journeys in this status' }),
      sort: z.enum(JOURNEY_SORTS).default('recent').openapi({ description: 'Order of the list', default: 'recent' }),
    }),
  },
  responses: {
    200: jsonContent(z.object({ data: z.array(UserJourneyListItem) }), 'The journeys'),
    ...commonErrors,
    ...authErrors,
  },
});

export const getUserJourney = createRoute({
  method: 'get',
  path: '/me/journeys/{id}',
  operationId: 'getUserJourney',
  tags: ['Journeys'],
  summary: 'One journey with per-spark progress',
  description: 'By enrollment id (the id of a list item, not the trail id). Another user\'s enrollment is 404, like an unknown one.',
  security,
  middleware: [bearerOnly, requirePermission('TRACK_PROGRESS')] as const,
  request: { params: z.object({ id: Uuid.openapi({ param: { name: 'id', in: 'path' } }) }) },
  responses: {
    200: jsonContent(UserJourneyDetail, 'The journey'),
    ...commonErrors,
    ...authErrors,
    404: errorResponse('NOT_FOUND: no enrollment of the caller has this id'),
  },
});

export const enrollInTrail = createRoute({
  method: 'post',
  path: '/me/journeys',
  operationId: 'enrollInTrail',
  tags: ['Journeys'],
  summary: 'Enroll in a trail (idempotent)',
  description:
    'Starts a journey on a trail of the current snapshot. 201 with the new journey; when the caller is already ' +
    'enrolled, 200 with the existing journey (nothing changes). Requires CREATE_JOURNEY.',
  security,
  middleware: [bearerOnly, requirePermission('CREATE_JOURNEY')] as const,
  request: {
    body: { required: true, content: { 'application/json': { schema: z.object({ trail_id: Uuid }).openapi('EnrollRequest') } } },
  },
  responses: {
    201: jsonContent(EnrollmentResult, 'Enrolled'),
    200: jsonContent(EnrollmentResult, 'Already enrolled: the existing journey'),
    ...commonErrors,
    ...authErrors,
    404: errorResponse('NOT_FOUND: the trail is not in the current snapshot'),
  },
});

export const recordLearningEvent = createRoute({
  method: 'post',
  path: '/me/events',
  operationId: 'recordLearningEvent',
  tags: ['Journeys'],
  summary: 'Record a learning event',
  description:
    'Records that the caller started, completed, mastered or bookmarked a spark of the current snapshot (verbs: ' +
    'GET /metadata learning_verbs). occurred_at defaults to now, may be at most 5 minutes in the future and not before 2000-01-01T00:00:00Z. ' +
    'Retries are safe: the same Idempotency-Key, or the same spark_id + verb + occurred_at, returns the original ' +
    'event with 200 and created=false. Reusing a key for a different event is 409. Requires TRACK_PROGRESS.',
  security,
  middleware: [bearerOnly, requirePermission('TRACK_PROGRESS')] as const,
  request: {
    headers: IdempotencyKeyHeader,
    body: {
      required: true,
      content: {
        'application/json': {
          schema: z
            .object({
              spark_id: Uuid,
              verb: Text(1, 50).openapi({ example: 'completed' }),
              occurred_at: z.iso.datetime({ offset: true }).optional().openapi({ description: 'ISO 8601 with Z or offset; defaults to now; from 2000-01-01T00:00:00Z to now + 5 minutes' }),
            })
            .openapi('LearningEventRequest'),
        },
      },
    },
  },
  responses: {
    201: jsonContent(LearningEvent, 'Recorded'),
    200: jsonContent(LearningEvent, 'Already recorded: the original event'),
    ...commonErrors,
    ...authErrors,
    404: errorResponse('NOT_FOUND: the spark is not in the current snapshot'),
    409: errorResponse('CONFLICT: the Idempotency-Key was already used for a different event'),
  },
});
