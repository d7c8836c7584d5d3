import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Sends JSON text built by SQL as it is: no parse and re-serialise on the hot path.
 * The route's response schema is still the contract; the HTTP tests validate every body
 * against it. The cast lets typed zod-openapi handlers return the passthrough response.
 */
export function sendJsonText(
  c: Context,
  body: string,
  status: ContentfulStatusCode = 200,
  headers: Record<string, string> = {},
): never {
  return c.body(body, status, { 'Content-Type': JSON_TYPE, ...headers }) as never;
}
