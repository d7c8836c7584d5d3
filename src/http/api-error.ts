import type { ContentfulStatusCode } from 'hono/utils/http-status';

/** Every error code the API answers with; the first five are the spec's, the rest are ours. */
export const ERROR_STATUS = {
  UNAUTHORIZED: 401,
  VALIDATION_ERROR: 400,
  NOT_FOUND: 404,
  INTERNAL_ERROR: 500,
  MISSING_REFRESH_TOKEN: 401,
  FORBIDDEN: 403,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  SERVICE_UNAVAILABLE: 503,
} as const satisfies Record<string, ContentfulStatusCode>;

export type ErrorCode = keyof typeof ERROR_STATUS;
export type ErrorDetails = Record<string, unknown>;

export interface ErrorEnvelope {
  error: { code: ErrorCode; message: string; details: ErrorDetails };
}

/** An error that becomes `{error:{code,message,details}}` with the code's status. */
export class ApiError extends Error {
  readonly status: ContentfulStatusCode;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetails = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = ERROR_STATUS[code];
  }

  toEnvelope(): ErrorEnvelope {
    return { error: { code: this.code, message: this.message, details: this.details } };
  }
}

export const unauthorized = (message = 'Authentication required', details: ErrorDetails = {}) =>
  new ApiError('UNAUTHORIZED', message, details, { 'WWW-Authenticate': 'Bearer' });
export const forbidden = (message: string, details: ErrorDetails = {}) => new ApiError('FORBIDDEN', message, details);
export const notFound = (message: string, details: ErrorDetails = {}) => new ApiError('NOT_FOUND', message, details);
export const validationError = (message: string, details: ErrorDetails = {}) =>
  new ApiError('VALIDATION_ERROR', message, details);
