import { OpenAPIHono, type Hook } from '@hono/zod-openapi';
import type { AppEnv } from './env.js';
import { validationError } from './api-error.js';

interface ZodIssueLike {
  path: PropertyKey[];
  message: string;
  code?: string;
}

/** zod issues → VALIDATION_ERROR whose details name every offending field. */
export function validationFailure(issues: readonly ZodIssueLike[], location: string) {
  const details = issues.map((issue) => ({
    field: issue.path.map(String).join('.') || location,
    location,
    message: issue.message,
  }));
  const fields = [...new Set(details.map((d) => d.field))];
  return validationError(`Invalid ${location} parameter${fields.length > 1 ? 's' : ''}: ${fields.join(', ')}`, {
    issues: details,
  });
}

// Validation failures throw, so every route answers them through the one error handler.
const throwOnInvalid: Hook<unknown, AppEnv, string, unknown> = (result) => {
  if (!result.success) throw validationFailure(result.error.issues, result.target);
};

/** A router for one area: typed routes whose contracts are also the OpenAPI document. */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({ strict: false, defaultHook: throwOnInvalid });
}
