import postgres from 'postgres';
import { DataApiError, isConnectionError } from '../db/errors.js';
import { ApiError, ERROR_STATUS, type ErrorCode } from './api-error.js';

/**
 * The one place where SQLSTATEs become API errors, read the way PostgREST reads them, so a call
 * answers alike through this API and through a Supabase project's Data API:
 *   PTxyz  our SQL asks for HTTP status xyz: PT401 not signed in, session ended or token not
 *          accepted · PT403 forbidden · PT404 not found (PostgREST's custom status codes)
 *   22023 invalid input (PostgREST: 400) · 23505 conflict (409)
 * and the data exceptions and constraint violations PostgreSQL raises itself. Only errors our
 * own SQL raised (plpgsql RAISE, routine `exec_stmt_raise`) show their message and JSON detail.
 * The same SQLSTATEs raised by PostgreSQL itself (a check constraint, a cast, a privilege check)
 * keep their code and status but answer with a generic message and empty details: their text
 * names relations and constraints and their detail can echo row data. Anything unmapped is an
 * INTERNAL_ERROR whose text never leaves the server.
 *
 * Errors of the Data API transport (DATA_API=supabase) go through the same table: PostgREST's
 * error body carries the SQLSTATE in `code`. Its own refusals of a token (PGRST3xx) are 401, and
 * an unreachable Data API is 503 like an unreachable database.
 */
const SQLSTATE_TO_CODE: Record<string, ErrorCode> = {
  '22023': 'VALIDATION_ERROR', // invalid_parameter_value, raised by api functions
  '22P02': 'VALIDATION_ERROR', // invalid_text_representation (bad uuid, number)
  '22007': 'VALIDATION_ERROR', // invalid_datetime_format
  '22008': 'VALIDATION_ERROR', // datetime_field_overflow
  '22001': 'VALIDATION_ERROR', // string_data_right_truncation
  '22P05': 'VALIDATION_ERROR', // untranslatable_character (e.g. \u0000 in jsonb)
  '22021': 'VALIDATION_ERROR', // character_not_in_repertoire (e.g. a NUL byte in text)
  '22003': 'VALIDATION_ERROR', // numeric_value_out_of_range
  '23514': 'VALIDATION_ERROR', // check_violation
  '23503': 'VALIDATION_ERROR', // foreign_key_violation (e.g. unknown verb)
  '42501': 'FORBIDDEN', // insufficient_privilege, from PostgreSQL's own privilege checks
  '23505': 'CONFLICT',
  '57014': 'SERVICE_UNAVAILABLE', // statement timeout: the database is overloaded
};

/** PostgREST's custom status codes: SQLSTATE `PT` + an HTTP status. */
const CUSTOM_STATUS = /^PT(\d{3})$/;

/** The error code of each status, for PTxyz: the first code in ERROR_STATUS with that status. */
const CODE_OF_STATUS = new Map<number, ErrorCode>();
for (const [code, status] of Object.entries(ERROR_STATUS) as [ErrorCode, number][]) {
  if (!CODE_OF_STATUS.has(status)) CODE_OF_STATUS.set(status, code);
}

const codeOf = (sqlstate: string): ErrorCode | undefined => {
  const custom = CUSTOM_STATUS.exec(sqlstate);
  return custom ? CODE_OF_STATUS.get(Number(custom[1])) : SQLSTATE_TO_CODE[sqlstate];
};

/** Messages for errors PostgreSQL raised on its own: nothing from the database is echoed. */
const GENERIC_MESSAGE: Partial<Record<ErrorCode, string>> = {
  NOT_FOUND: 'Not found',
  VALIDATION_ERROR: 'A value in the request is invalid',
  FORBIDDEN: 'Not allowed',
  CONFLICT: 'The request conflicts with existing data',
  UNAUTHORIZED: 'Authentication required',
};

/**
 * The API error a failed database call answers with, or undefined when it is not one we map
 * (the error handler then answers INTERNAL_ERROR).
 *
 * @example
 *   fromDatabaseError(await sql`select 'x'::uuid`.catch((e) => e))?.code // => 'VALIDATION_ERROR'
 */
export function fromDatabaseError(error: unknown): ApiError | undefined {
  if (isConnectionError(error) || (error instanceof DataApiError && error.unavailable)) {
    return new ApiError('SERVICE_UNAVAILABLE', 'The database is unavailable; try again shortly', {}, { 'Retry-After': '1' });
  }
  if (error instanceof DataApiError && /^PGRST3\d\d$/.test(error.code)) {
    return new ApiError('UNAUTHORIZED', 'The Data API did not accept the access token', {});
  }
  if (!isDatabaseError(error)) return undefined;
  const code = codeOf(error.code);
  if (!code) return undefined;
  if (code === 'SERVICE_UNAVAILABLE') return new ApiError(code, 'The database took too long to answer', {}, { 'Retry-After': '1' });
  if (isRaisedByOurSql(error)) return new ApiError(code, error.message, parseDetail(error.detail));
  return new ApiError(code, GENERIC_MESSAGE[code] ?? 'The request could not be processed', {});
}

/** An error the database raised, as postgres.js or the Data API delivers it. */
export function isDatabaseError(error: unknown): error is postgres.PostgresError | DataApiError {
  return error instanceof postgres.PostgresError || error instanceof DataApiError;
}

/**
 * True when a plpgsql RAISE in our schema produced the error. postgres.js exposes the server's
 * `routine` field (built-in errors name the C function that failed instead). PostgREST's error
 * body has no routine, so through the Data API an error is ours when its SQLSTATE is a `PTxyz`
 * code (PostgreSQL never raises those) or its detail is a JSON object (our raises build theirs
 * with jsonb_build_object; PostgreSQL's own details are sentences such as "Key (id)=(…) already
 * exists."). An error of ours with neither answers generically, which loses a message, never
 * leaks one.
 */
export function isRaisedByOurSql(error: unknown): boolean {
  if (error instanceof postgres.PostgresError) return error.routine === 'exec_stmt_raise';
  return error instanceof DataApiError && (CUSTOM_STATUS.test(error.code) || isJsonObject(error.detail));
}

function isJsonObject(text: string | undefined): boolean {
  if (!text?.startsWith('{')) return false;
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed);
  } catch {
    return false;
  }
}

function parseDetail(detail: string | undefined): Record<string, unknown> {
  if (!detail) return {};
  try {
    const parsed: unknown = JSON.parse(detail);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : { detail };
  } catch {
    return { detail };
  }
}
