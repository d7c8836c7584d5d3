import { z } from 'zod';

/**
 * The only reader of process.env. Every variable is documented in README.md and .env.example.
 * A bad value stops start-up with one line naming the variable.
 */
const booleanFlag = z
  .enum(['true', 'false', '1', '0', ''])
  .default('false')
  .transform((v) => v === 'true' || v === '1');

const integer = (fallback: number, min: number, max: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

const optionalText = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v));

export const configSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
    HOST: z.string().min(1).default('127.0.0.1'),
    PORT: integer(3000, 0, 65535),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

    DATABASE_URL: optionalText.pipe(z.url({ protocol: /^postgres(ql)?$/ }).optional()),
    EMBEDDED_PG_DATA_DIR: z.string().min(1).default('.data/postgres'),
    EMBEDDED_PG_PORT: integer(54329, 1024, 65535),
    DB_POOL_MAX: integer(10, 1, 200),
    DB_STATEMENT_TIMEOUT_MS: integer(5000, 100, 600_000),
    DB_CONNECT_TIMEOUT_S: integer(3, 1, 60),
    SEED_DEMO_CONTENT: z.enum(['true', 'false']).default('true').transform((v) => v === 'true'),

    SUPABASE_JWT_SECRET: optionalText.pipe(z.string().min(32, 'must be at least 32 characters').optional()),
    JWT_JWKS_URL: optionalText.pipe(z.url().optional()),
    JWT_AUDIENCE: z.string().min(1).default('authenticated'),
    JWT_ISSUER: optionalText,

    SERVICE_AUTH_SECRET: optionalText.pipe(z.string().min(32, 'must be at least 32 characters').optional()),

    DEV_BYPASS_AUTH: booleanFlag,
    DEV_USER_ID: optionalText.pipe(z.uuid().optional()),

    BODY_LIMIT_BYTES: integer(64 * 1024, 1024, 10 * 1024 * 1024),
  })
  .superRefine((env, ctx) => {
    if (env.DEV_BYPASS_AUTH && env.NODE_ENV === 'production') {
      ctx.addIssue({ code: 'custom', path: ['DEV_BYPASS_AUTH'], message: 'must not be true when NODE_ENV=production' });
    }
    if (env.DEV_BYPASS_AUTH && !env.DEV_USER_ID) {
      ctx.addIssue({ code: 'custom', path: ['DEV_USER_ID'], message: 'is required when DEV_BYPASS_AUTH=true' });
    }
    if (env.NODE_ENV === 'production' && !env.SUPABASE_JWT_SECRET && !env.JWT_JWKS_URL) {
      ctx.addIssue({ code: 'custom', path: ['SUPABASE_JWT_SECRET'], message: 'or JWT_JWKS_URL is required when NODE_ENV=production' });
    }
  });

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {}

/** Parses an environment; throws ConfigError whose message is one line naming the variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const result = configSchema.safeParse(env);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const name = issue.path.join('.') || 'environment';
  throw new ConfigError(`Invalid configuration: ${name} ${issue.message}`);
}
