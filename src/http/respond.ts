import type { Context, TypedResponse } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * A response whose body is JSON text the compiler cannot see. Its body type is `never`, so it
 * fits the JSON body a route declares for `S`, whatever that is: only the status is checked.
 */
export type JsonTextResponse<S extends ContentfulStatusCode> = Response & TypedResponse<never, S, 'json'>;

/**
 * Sends JSON text built by SQL as it is: no parse and re-serialise on the hot path.
 *
 * Typed the way Hono types `c.json()`: a plain Response at run time, a TypedResponse to the
 * compiler. So a typed handler (`RouteHandler<typeof route, AppEnv>`) returns it as is, and a
 * status its route does not declare is a compile error. The body's shape is SQL's to keep:
 * the HTTP tests validate every body against the route's contract.
 *
 * @example
 *   export const getMetadata: RouteHandler<typeof routes.getMetadata, AppEnv> = async (c) =>
 *     sendJsonText(c, await c.var.services.rpc.call('get_metadata', {}, c.var.context.db), 200);
 */
export function sendJsonText<S extends ContentfulStatusCode = 200>(
  c: Context,
  body: string,
  status?: S,
  headers?: Record<string, string>,
): JsonTextResponse<S>;
export function sendJsonText(c: Context, body: string, status: ContentfulStatusCode = 200, headers: Record<string, string> = {}): Response {
  return c.body(body, status, { 'Content-Type': JSON_TYPE, ...headers });
}

/**
 * Sends a write's JSON text with 201 when the body says this request created the row
 * (`"created": true`), else 200 (the row already existed: a retry or an idempotent repeat).
 *
 * @example
 *   return sendCreatedOrExisting(c, await c.var.services.rpc.call('enroll_in_trail', { trail_id }, c.var.context.db));
 */
export function sendCreatedOrExisting(c: Context, body: string) {
  return sendJsonText(c, body, saysCreated(body) ? 201 : 200);
}

/**
 * Whether a write's JSON text has `"created": true`, found without parsing it: an enrollment's
 * answer is its whole journey (~30 KB at 250 sparks), and parsing it cost the API a tenth of its
 * CPU per enroll. In JSON text an unescaped `"created":` is always a key (a quote inside a
 * string is escaped), and the write answers have one such key, at the top.
 */
export function saysCreated(body: string): boolean {
  return CREATED_TRUE.test(body);
}
const CREATED_TRUE = /"created"\s*:\s*true\b/;
