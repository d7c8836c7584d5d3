import type { Context, ErrorHandler, NotFoundHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { Logger } from 'pino';
import { ApiError } from './api-error.js';
import { fromDatabaseError, isDatabaseError, isRaisedByOurSql } from './database-errors.js';

/** Turns anything thrown into the `{error:{code,message,details}}` envelope. */
export function createErrorHandler(logger: Logger): ErrorHandler {
  return (error, c) => {
    const apiError = error instanceof ApiError ? error : (fromDatabaseError(error) ?? fromHttpException(error));
    if (apiError) {
      // A built-in database error answered generically: keep its text in the log only.
      if (isDatabaseError(error) && !isRaisedByOurSql(error)) {
        logger.warn({ err: error, req_id: c.get('requestId') }, 'database error answered generically');
      }
      return sendError(c, apiError);
    }
    logger.error({ err: error, req_id: c.get('requestId') }, 'unhandled error');
    return sendError(c, new ApiError('INTERNAL_ERROR', 'An unexpected error occurred'));
  };
}

function fromHttpException(error: unknown): ApiError | undefined {
  if (!(error instanceof HTTPException)) return undefined;
  switch (error.status) {
    case 400:
      return new ApiError('VALIDATION_ERROR', error.message || 'Malformed request');
    case 401:
      return new ApiError('UNAUTHORIZED', error.message || 'Authentication required');
    case 413:
      return new ApiError('PAYLOAD_TOO_LARGE', 'Request body is too large');
    case 415:
      return new ApiError('UNSUPPORTED_MEDIA_TYPE', error.message || 'Unsupported content type');
    default:
      return undefined;
  }
}

export function sendError(c: Context, error: ApiError) {
  for (const [name, value] of Object.entries(error.headers)) c.header(name, value);
  c.header('Cache-Control', 'no-store');
  return c.json(error.toEnvelope(), error.status);
}

/** A method table built from the registered routes, so a known path answers 405, not 404. */
export function createNotFoundHandler(routes: () => { method: string; path: string }[]): NotFoundHandler {
  let table: { pattern: RegExp; methods: Set<string> }[] | undefined;
  const build = () => {
    const byPath = new Map<string, Set<string>>();
    for (const route of routes()) {
      if (route.method === 'ALL' || route.path.includes('*')) continue;
      const key = route.path.replace(/\/+$/, '') || '/';
      if (!byPath.has(key)) byPath.set(key, new Set());
      byPath.get(key)!.add(route.method);
      if (route.method === 'GET') byPath.get(key)!.add('HEAD');
    }
    return [...byPath].map(([path, methods]) => ({
      pattern: new RegExp(`^${path.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z_]+/g, '[^/]+')}/?$`),
      methods,
    }));
  };
  return (c) => {
    table ??= build();
    const match = table.find((entry) => entry.pattern.test(c.req.path));
    if (match) {
      const allow = [...match.methods].sort().join(', ');
      c.header('Allow', allow);
      return sendError(c, new ApiError('METHOD_NOT_ALLOWED', `Method ${c.req.method} is not allowed here; use ${allow}`, { allow: [...match.methods].sort() }));
    }
    return sendError(c, new ApiError('NOT_FOUND', `No route for ${c.req.method} ${c.req.path}`));
  };
}
