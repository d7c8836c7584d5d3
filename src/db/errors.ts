/**
 * Errors that mean "the database is not reachable right now" rather than "this query failed":
 * the adapter starts its recovery on them. Which API error a failure becomes is decided at the
 * HTTP edge (src/http/database-errors.ts).
 */
const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH',
  'CONNECT_TIMEOUT', 'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED',
  '57P01', '57P02', '57P03', '08000', '08003', '08006', '08001', '08004', '53300',
]);

export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && CONNECTION_ERROR_CODES.has(code);
}

/** PostgREST's error body (docs.postgrest.org, Errors): `code` is the SQLSTATE when the database raised it. */
export interface DataApiErrorBody {
  code?: string | null;
  message?: string | null;
  details?: string | null;
  hint?: string | null;
}

/**
 * A call the Data API (a Supabase project's PostgREST) answered with an error, or could not make.
 * `code` is the SQLSTATE when the database raised the error (PostgREST's error body carries it),
 * one of PostgREST's own `PGRSTxxx` codes when PostgREST refused the request itself, or empty
 * when no PostgREST answered (the network, a timeout, the gateway). Which API error it becomes
 * is decided at the HTTP edge, by the same SQLSTATE table as a postgres.js error.
 */
export class DataApiError extends Error {
  readonly code: string;
  readonly detail: string | undefined;
  readonly hint: string | undefined;

  constructor(
    /** The HTTP status of the answer; 0 when nothing answered. */
    readonly status: number,
    body: DataApiErrorBody,
  ) {
    super(body.message || `the Data API answered ${status}`);
    this.name = 'DataApiError';
    this.code = body.code ?? '';
    this.detail = body.details ?? undefined;
    this.hint = body.hint ?? undefined;
  }

  /**
   * The Data API is unreachable rather than the call refused: no answer, a gateway's 502, 503 or
   * 504 without a code, or PostgREST's PGRST000-003 (it cannot reach the database, its schema
   * cache is not loaded, no pool connection in time).
   */
  get unavailable(): boolean {
    return this.code === '' ? [0, 502, 503, 504].includes(this.status) : /^PGRST00[0-3]$/.test(this.code);
  }
}
