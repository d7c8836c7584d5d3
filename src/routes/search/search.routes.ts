import { createRoute, z } from '@hono/zod-openapi';
import { requirePermission } from '../../context/middleware.js';
import { commonErrors, Difficulty, errorResponse, intQuery, jsonContent, notModified, pageQuery, PaginationMetaSchema, PRIVATE_SNAPSHOT_CACHING, Text, Uuid } from '../../http/schemas.js';

/** Documented maximums (the spec leaves them open); SQL enforces the same bounds. */
export const SEARCH_MAX_PER_PAGE = 50;
export const AUTOCOMPLETE_MAX_LIMIT = 20;

export const SEARCH_TYPES = ['spark', 'concept', 'trail', 'domain'] as const;
const SearchType = z.enum(SEARCH_TYPES);

const authErrors = {
  401: errorResponse('UNAUTHORIZED: a JWT (or, for search, X-Service-Auth) is required'),
  403: errorResponse('FORBIDDEN: the caller lacks READ_PUBLIC_CONTENT'),
  404: errorResponse('NOT_FOUND: snapshot_id names no snapshot'),
};

const SearchItem = z
  .object({
    type: SearchType,
    id: Uuid,
    slug: z.string(),
    title: z.string(),
    summary: z.string(),
    score: z.number(),
  })
  .openapi('SearchItem');

const countsOf = <T extends readonly [string, ...string[]]>(keys: T) =>
  z.object(Object.fromEntries(keys.map((k) => [k, z.number().int()])) as Record<T[number], z.ZodNumber>);

/** Present when q matched nothing as typed and was relaxed: the (normalised) text actually used. */
const CorrectedQuery = z.string().openapi({
  description: 'Present only when q matched nothing as typed and its words were typo-corrected (search: or its last words dropped): the normalised text the results are for ("showing results for …").',
  example: 'testing',
});

export const SearchResultSchema = z
  .object({
    data: z.array(SearchItem),
    meta: PaginationMetaSchema.extend({ corrected_query: CorrectedQuery.optional() }),
    facets: z.object({
      types: countsOf(SEARCH_TYPES),
      difficulties: countsOf(['beginner', 'intermediate', 'advanced', 'expert'] as const),
    }),
  })
  .openapi('SearchResult');

export const SuggestionsSchema = z
  .object({
    suggestions: z.array(z.object({ text: z.string(), type: SearchType })),
    meta: z.object({ corrected_query: CorrectedQuery }).optional().openapi({ description: 'Present only when typo-corrected suggestions are included.' }),
  })
  .openapi('SearchSuggestions');

const security: Record<string, string[]>[] = [{ bearerAuth: [] }, { cookieAuth: [] }, { serviceAuth: [] }];
const guard = requirePermission('READ_PUBLIC_CONTENT', { allowService: true });

export const searchContent = createRoute({
  method: 'get',
  path: '/',
  tags: ['Search'],
  summary: 'Full-text search across sparks, concepts, trails and domains',
  description:
    'English full-text search (accent-insensitive; title weighs more than summary/description) over the selected snapshot. ' +
    'Plain words also match the last word as a prefix. Typo-tolerant: a word that matches nothing in the snapshot is replaced by the closest word of the snapshot ' +
    '(1 edit for words of 4-7 characters, 2 for 8 or more, a transposition counting as one; the last word also as a prefix), and meta.corrected_query says so; ' +
    'when the words never meet in one row, the last ones are dropped until the rest matches (meta.corrected_query names the words kept); ' +
    'when that finds nothing either, titles are matched with trigram similarity. ' +
    `Ordered by score, then title, type, id. per_page at most ${SEARCH_MAX_PER_PAGE}; at most 1000 matches are ranked (title matches first); meta.total and facets count every match. ` +
    'facets.types ignores the type filter, facets.difficulties ignores the difficulty filter. ' +
    PRIVATE_SNAPSHOT_CACHING,
  middleware: [guard] as const,
  security,
  request: {
    query: z.object({
      q: Text(1, 200, { trim: true }),
      // `all` is the spec's documented default: the same as leaving type out.
      type: z
        .enum(['all', ...SEARCH_TYPES])
        .optional()
        .transform((value) => (value === 'all' ? undefined : value))
        .openapi({ type: 'string', enum: ['all', ...SEARCH_TYPES], description: 'all (the default) or one content type' }),
      difficulty: Difficulty.optional().openapi({ description: 'sparks by difficulty, trails by difficulty_level; concepts and domains have none' }),
      ...pageQuery(SEARCH_MAX_PER_PAGE),
      snapshot_id: Uuid.optional(),
    }),
  },
  responses: { 200: jsonContent(SearchResultSchema, 'A page of ranked matches with facets'), 304: notModified, ...commonErrors, ...authErrors },
});

export const autocomplete = createRoute({
  method: 'get',
  path: '/autocomplete',
  tags: ['Search'],
  summary: 'Title suggestions while typing',
  description:
    'Titles (domain names) starting with q first, then titles with a word starting with q; when a word of q matches nothing, the same two for the typo-corrected text ' +
    '(meta.corrected_query names it); then (q of one word of 4+ characters) ' +
    `titles holding a word of the catalog close to it by trigram similarity. Each {text,type} once. limit defaults to 5, at most ${AUTOCOMPLETE_MAX_LIMIT}. ` +
    PRIVATE_SNAPSHOT_CACHING,
  middleware: [guard] as const,
  security,
  request: {
    query: z.object({
      q: Text(2, 100, { trim: true }),
      limit: intQuery(5, 1, AUTOCOMPLETE_MAX_LIMIT),
      snapshot_id: Uuid.optional(),
    }),
  },
  responses: { 200: jsonContent(SuggestionsSchema, 'Suggestions, best first'), 304: notModified, ...commonErrors, ...authErrors },
});
