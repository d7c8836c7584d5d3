import { z } from '@hono/zod-openapi';

/** Shared zod pieces: one definition per concept, reused by every route contract. */

export const ErrorEnvelopeSchema = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: 'VALIDATION_ERROR' }),
      message: z.string(),
      details: z.record(z.string(), z.unknown()).optional(),
    }),
  })
  .openapi('ErrorEnvelope');

export const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: ErrorEnvelopeSchema } },
});

/** The error statuses every route can answer with, besides its own. */
export const commonErrors = {
  400: errorResponse('VALIDATION_ERROR: a parameter is invalid; details.issues names each field'),
  401: errorResponse('UNAUTHORIZED: credentials are required here, or a bearer token was presented and is invalid or expired'),
  429: errorResponse('RATE_LIMITED: too many requests; see Retry-After'),
  500: errorResponse('INTERNAL_ERROR: an unexpected failure (no internals are disclosed)'),
  503: errorResponse('SERVICE_UNAVAILABLE: the database is unreachable'),
} as const;

export const jsonContent = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

/** Text without C0 controls (NUL, tab, newline, …), DEL or C1 controls. */
const NO_CONTROL_CHARACTERS = /^[^\u0000-\u001f\u007f-\u009f]*$/;

/**
 * Free text from a caller (query parameter, header or body field): `min`–`max` characters and no
 * control characters, so NUL and friends are a 400 here instead of an encoding error in the
 * database. `trim: true` strips surrounding whitespace first (lengths count after trimming).
 *
 * @example
 *   query: z.object({ q: Text(1, 200, { trim: true }) })        // GET ?q=ab%00cd → 400
 *   body: z.object({ verb: Text(1, 50) })
 */
export const Text = (min: number, max: number, options: { trim?: boolean } = {}) => {
  const base = options.trim ? z.string().trim() : z.string();
  return base
    .min(min, min === 1 ? 'must not be empty' : `must be at least ${min} characters`)
    .max(max, `must be at most ${max} characters`)
    .regex(NO_CONTROL_CHARACTERS, 'must not contain control characters');
};

export const Uuid = z.uuid().openapi({ example: '3f1c2d4e-5b6a-4c7d-8e9f-0a1b2c3d4e5f' });

export const Slug = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'must be a lowercase slug (letters, digits, hyphens)');

export const DIFFICULTY_LEVELS = ['beginner', 'intermediate', 'advanced', 'expert'] as const;
export const Difficulty = z.enum(DIFFICULTY_LEVELS);

/**
 * Integer query parameter with a default and a documented range. Only plain decimal digits are
 * accepted: `1e2`, `0x10`, `1.0` and ` 7` are refused rather than coerced.
 */
export const intQuery = (fallback: number, min: number, max: number) =>
  z
    .string()
    .regex(/^-?\d{1,15}$/, 'must be an integer')
    .default(String(fallback))
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`))
    .openapi({ type: 'integer', default: fallback, minimum: min, maximum: max });

export const booleanQuery = (fallback: boolean) =>
  z
    .enum(['true', 'false'], { error: 'must be true or false' })
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true')
    .openapi({ type: 'string', enum: ['true', 'false'], default: String(fallback) });

export const pageQuery = (maxPerPage: number) => ({
  page: intQuery(1, 1, 100_000),
  per_page: intQuery(20, 1, maxPerPage),
});

export const PaginationMetaSchema = z
  .object({
    total: z.number().int(),
    page: z.number().int(),
    per_page: z.number().int(),
    total_pages: z.number().int(),
    has_next: z.boolean(),
    has_prev: z.boolean(),
  })
  .openapi('PaginationMeta');

export const HealthSchema = z
  .object({
    status: z.enum(['ok', 'unavailable']),
    checks: z.object({
      database: z.enum(['ok', 'unavailable']),
      sessions: z.enum(['ok', 'unavailable']),
      // Only with a read replica (DATABASE_READ_URL); informative: reads fall back to the primary.
      read_replica: z.enum(['ok', 'unavailable']).optional(),
      // Only with DATA_API=supabase: requests go through the project's Data API, so it must answer.
      data_api: z.enum(['ok', 'unavailable']).optional(),
    }),
  })
  .openapi('Health');

/** The 304 of the snapshot reads (src/http/cache.ts). */
export const notModified = {
  description: 'Not modified: the If-None-Match tag still names this response (no body).',
} as const;

/** How the snapshot reads of routes that need a token are cached (createSnapshotReader, privateToCaller). */
export const PRIVATE_SNAPSHOT_CACHING =
  'Snapshot content, the same for every caller: an ETag (resolved snapshot + normalised query) and Cache-Control ' +
  'private (no-cache for the current snapshot, max-age=3600 with snapshot_id); If-None-Match answers 304.';
