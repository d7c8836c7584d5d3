import { createRoute, z } from '@hono/zod-openapi';
import { requirePermission } from '../../context/middleware.js';
import { commonErrors, Difficulty, errorResponse, intQuery, jsonContent, Slug, Uuid } from '../../http/schemas.js';
import { authErrors, bearerOnly, IdempotencyKeyHeader, LearningEvent, security, Timestamp } from '../journeys/journeys.routes.js';

/**
 * Contracts of the learner's routes beyond the spec: what next, spaced review, voiding an event
 * and the xAPI export (docs/learning.md). Everything is derived in SQL (supabase/schemas/14-learning.sql).
 */

const Ref = z.object({ id: Uuid, slug: z.string(), title: z.string() });
const Iso = z.iso.datetime({ offset: true });

export const REVIEW_RATINGS = ['again', 'hard', 'good', 'easy'] as const;

const NextSpark = z
  .object({
    id: Uuid,
    slug: z.string(),
    title: z.string(),
    difficulty: Difficulty,
    estimated_mins: z.number().int(),
    trail: Ref.openapi({ description: 'The trail it is next in (its first enrolled trail by recent activity)' }),
    concept: Ref.openapi({ description: 'Its concept in that trail' }),
    builds_on: z.array(Ref).openapi({ description: 'Its prerequisites (all completed), by slug' }),
  })
  .openapi('NextSpark');

export const listNextSparks = createRoute({
  method: 'get',
  path: '/me/next',
  operationId: 'listNextSparks',
  tags: ['Learning'],
  summary: 'What to learn next',
  description:
    'Sparks of the current snapshot the caller is ready for: not completed or mastered, and every prerequisite completed or mastered ' +
    '(voided events count for nothing). Enrolled trails by most recent activity first, then each trail’s concept and spark order, then ' +
    'difficulty closest to the caller’s recent level. With `trail`, only that trail (enrolled or not). Never cached.',
  security,
  middleware: [bearerOnly, requirePermission('TRACK_PROGRESS')] as const,
  request: {
    query: z.object({
      trail: Slug.optional().openapi({ description: 'A trail slug of the current snapshot; default: every enrolled trail' }),
      limit: intQuery(10, 1, 100),
    }),
  },
  responses: {
    200: jsonContent(
      z.object({
        data: z.array(NextSpark),
        meta: z.object({
          limit: z.number().int(),
          recent_level: z.number().openapi({ description: 'Mean difficulty (beginner 1 … expert 4) of the 10 sparks completed most recently; 1 when none' }),
        }),
      }),
      'The ready sparks, best first',
    ),
    ...commonErrors,
    ...authErrors,
    404: errorResponse('NOT_FOUND: no trail of the current snapshot has this slug'),
  },
});

const ReviewCard = z
  .object({
    due_at: Timestamp,
    stability: z.number().openapi({ description: 'FSRS stability: days until recall probability falls to 90 %' }),
    difficulty: z.number().openapi({ description: 'FSRS difficulty, 1 (easy) to 10 (hard)' }),
    retrievability: z.number().openapi({ description: 'Probability of recall now (FSRS-6 forgetting curve, whole days since the last review)' }),
    last_review_at: Timestamp,
    scheduled_days: z.number().int(),
    reps: z.number().int(),
    lapses: z.number().int(),
  })
  .openapi('ReviewCard');

export const listDueReviews = createRoute({
  method: 'get',
  path: '/me/reviews',
  operationId: 'listDueReviews',
  tags: ['Learning'],
  summary: 'Sparks due for review',
  description:
    'The caller’s review cards due at or before `due_before` (default now), soonest first. Completing or mastering a spark schedules its ' +
    'first review; each review (POST) reschedules it with FSRS-6. Sparks that left the current snapshot wait. Never cached.',
  security,
  middleware: [bearerOnly, requirePermission('TRACK_PROGRESS')] as const,
  request: {
    query: z.object({
      due_before: Iso.optional().openapi({ description: 'ISO 8601 with Z or offset; default now' }),
      limit: intQuery(20, 1, 100),
    }),
  },
  responses: {
    200: jsonContent(
      z.object({
        data: z.array(z.object({ spark: Ref.extend({ estimated_mins: z.number().int() }), card: ReviewCard }).openapi('DueReview')),
        meta: z.object({ due_before: Timestamp, limit: z.number().int(), total: z.number().int().openapi({ description: 'Every card due by then' }) }),
      }),
      'The due reviews',
    ),
    ...commonErrors,
    ...authErrors,
  },
});

const SparkReview = z
  .object({
    id: Uuid,
    spark_id: Uuid,
    rating: z.enum(REVIEW_RATINGS),
    reviewed_at: Timestamp,
    recorded_at: Timestamp,
    idempotency_key: z.string().nullable(),
    created: z.boolean().openapi({ description: 'true when this request recorded the review (201), false when an earlier identical one was returned (200)' }),
    card: ReviewCard.openapi({ description: 'The spark’s card as scheduled now' }),
  })
  .openapi('SparkReview');

export const recordReview = createRoute({
  method: 'post',
  path: '/me/reviews',
  operationId: 'recordReview',
  tags: ['Learning'],
  summary: 'Record a review',
  description:
    'Records how well the caller recalled a spark of the current snapshot (again, hard, good, easy) and reschedules its card. reviewed_at ' +
    'defaults to now, at most 5 minutes ahead and not before 2000-01-01T00:00:00Z. Retries are safe: the same Idempotency-Key, or the same ' +
    'spark and reviewed_at, returns the original review with 200; the same key or time for a different review is 409.',
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
              rating: z.enum(REVIEW_RATINGS, { error: 'must be one of again, hard, good, easy' }),
              reviewed_at: Iso.optional().openapi({ description: 'ISO 8601 with Z or offset; defaults to now' }),
            })
            .openapi('ReviewRequest'),
        },
      },
    },
  },
  responses: {
    201: jsonContent(SparkReview, 'Recorded'),
    200: jsonContent(SparkReview, 'Already recorded: the original review'),
    ...commonErrors,
    ...authErrors,
    404: errorResponse('NOT_FOUND: the spark is not in the current snapshot'),
    409: errorResponse('CONFLICT: the Idempotency-Key, or the spark and reviewed_at, were already used for a different review'),
  },
});

export const voidLearningEvent = createRoute({
  method: 'post',
  path: '/me/events/{id}/void',
  operationId: 'voidLearningEvent',
  tags: ['Learning'],
  summary: 'Void a learning event',
  description:
    'Takes back one of the caller’s learning events: it no longer counts for journeys, the learning path, what next or review ' +
    'scheduling, and the xAPI export shows a voiding statement instead of it. Idempotent (a voided event stays voided, voided_at keeps its first value).',
  security,
  middleware: [bearerOnly, requirePermission('TRACK_PROGRESS')] as const,
  request: { params: z.object({ id: Uuid.openapi({ param: { name: 'id', in: 'path' } }) }) },
  responses: {
    200: jsonContent(LearningEvent, 'The voided event (created is false)'),
    ...commonErrors,
    ...authErrors,
    404: errorResponse('NOT_FOUND: no learning event of the caller has this id'),
  },
});

const LanguageMap = z.record(z.string(), z.string());
const Agent = z.object({
  objectType: z.literal('Agent'),
  account: z.object({ homePage: z.url(), name: z.string().openapi({ description: 'The user id' }) }),
});
const Statement = z
  .object({
    id: Uuid,
    actor: Agent,
    verb: z.object({ id: z.url(), display: LanguageMap }),
    object: z.union([
      z.object({
        objectType: z.literal('Activity'),
        id: z.url().openapi({ description: '<PUBLIC_BASE_URL>/activities/sparks/<spark id>' }),
        definition: z.object({ type: z.url(), name: LanguageMap.optional() }),
      }),
      z.object({ objectType: z.literal('StatementRef'), id: Uuid }),
    ]),
    timestamp: z.string().openapi({ format: 'date-time' }),
    stored: z.string().openapi({ format: 'date-time' }),
    version: z.literal('1.0.3'),
  })
  .openapi('XapiStatement');

export const listStatements = createRoute({
  method: 'get',
  path: '/me/statements',
  operationId: 'listStatements',
  tags: ['Learning'],
  summary: 'The caller’s learning records as xAPI statements',
  description:
    'An xAPI 1.0.3 StatementResult of the caller’s learning events, newest stored first: one statement per event, and a voiding ' +
    'statement for each voided event (the voided statement itself is left out, as an LRS does). `since` (exclusive) and `until` ' +
    '(inclusive) bound `stored`; `more` is the relative IRL of the next page, or "". Never cached.',
  security,
  middleware: [bearerOnly, requirePermission('TRACK_PROGRESS')] as const,
  request: {
    query: z.object({
      since: Iso.optional(),
      until: Iso.optional(),
      limit: intQuery(100, 0, 500).openapi({ description: 'Statements per page; 0 means the maximum, 500' }),
      cursor: z
        .string()
        .regex(/^\d{1,18}\.[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, 'must be a cursor from a previous page’s more link')
        .optional()
        .openapi({ description: 'Where the previous page ended (from its `more` link)' }),
    }),
  },
  responses: {
    200: {
      ...jsonContent(z.object({ statements: z.array(Statement), more: z.string() }).openapi('XapiStatementResult'), 'The statements'),
      headers: { 'X-Experience-API-Version': { schema: { type: 'string', example: '1.0.3' } } },
    },
    ...commonErrors,
    ...authErrors,
  },
});
