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
