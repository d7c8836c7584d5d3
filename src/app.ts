import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { OpenAPIHono } from '@hono/zod-openapi';
import { bodyLimit } from 'hono/body-limit';
import { Scalar } from '@scalar/hono-api-reference';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Rpc } from './db/rpc.js';
import type { JwtVerifier } from './context/jwt.js';
import { createContextResolver } from './context/resolve-context.js';
import { contextMiddleware } from './context/middleware.js';
import type { AppEnv } from './http/env.js';
import { ApiError } from './http/api-error.js';
import { createErrorHandler, createNotFoundHandler } from './http/error-handler.js';
import { requestLogging } from './http/request-id.js';
import { validationFailure } from './http/router.js';
import { createRouteServices } from './http/services.js';
import { metadataRouter } from './routes/metadata/index.js';
import { discoveryRouter } from './routes/discovery/index.js';
import { domainsRouter } from './routes/domains/index.js';
import { snapshotsRouter } from './routes/snapshots/index.js';
import { authRouter } from './routes/auth/index.js';
import type { AuthService } from './auth/auth-service.js';
import type { SupabaseAuth } from './auth/supabase-auth.js';
import { crossSiteGuard } from './auth/csrf.js';
import { frontEndOrigins, parseOrigins } from './auth/redirect.js';
import { corsPolicy } from './http/cors.js';
import { explorerRouter } from './http/explorer.js';
import { rateLimit } from './http/rate-limit.js';
import type { RateLimitStore } from './db/rate-limit-store.js';
import { journeysRouter } from './routes/journeys/index.js';
import { searchRouter } from './routes/search/index.js';
import { graphRouter } from './routes/graph/index.js';

/** What the app talks to: built by createDependencies (src/deps.ts), plus a logger. */
export interface AppDeps {
  config: Config;
  rpc: Rpc;
  logger: Logger;
  verifier: JwtVerifier;
  /** Sign-in and sessions. */
  auth: AuthService;
  /** Sign-in delegated to Supabase Auth (AUTH_PROVIDER=supabase). */
  supabaseAuth?: SupabaseAuth;
  /** Rate-limit counters: in memory, or shared by instances (RATE_LIMIT_STORE). */
  rateLimitStore: RateLimitStore;
}

export const API_TITLE = 'Sparkpath API';

const SCALAR_BUNDLE = createRequire(import.meta.url).resolve('@scalar/api-reference/browser/standalone.js');
let scalarBundle: string | undefined;

/** Builds the HTTP application. No I/O happens here: everything it talks to arrives in deps. */
export function createApp(deps: AppDeps) {
  const { config, rpc, logger } = deps;
  const app = new OpenAPIHono<AppEnv>({
    strict: false,
    defaultHook: (result) => {
      if (!result.success) throw validationFailure(result.error.issues, result.target);
    },
  });

  const resolveContext = createContextResolver({
    verifier: deps.verifier,
    serviceSecret: config.SERVICE_AUTH_SECRET,
    devBypass: config.DEV_BYPASS_AUTH && config.DEV_USER_ID ? { userId: config.DEV_USER_ID } : undefined,
  });

  app.use(requestLogging(logger));
  // First after the log line: preflights are answered here, and every later answer (errors
  // included) carries the CORS headers a listed front end needs to read it.
  app.use(corsPolicy(parseOrigins(config.CORS_ALLOWED_ORIGINS)));
  const limitBody = bodyLimit({
    maxSize: config.BODY_LIMIT_BYTES,
    onError: () => {
      throw new ApiError('PAYLOAD_TOO_LARGE', `Request body exceeds ${config.BODY_LIMIT_BYTES} bytes`);
    },
  });
  // GET and HEAD carry no body here; bodyLimit would still build a full fetch Request to look.
  app.use((c, next) => (c.req.method === 'GET' || c.req.method === 'HEAD' ? next() : limitBody(c, next)));
  app.use(contextMiddleware(resolveContext, { lenientPaths: new Set(['/auth/session']) }));
  // The front ends we serve, plus the API's own public origin (behind a TLS-terminating proxy
  // the request URL the app sees is not the one the browser used).
  app.use(crossSiteGuard(new Set([...frontEndOrigins(config), new URL(config.AUTH_CALLBACK_URL).origin])));
  app.use(
    rateLimit({
      enabled: config.RATE_LIMITS_ENABLED,
      windowSeconds: config.RATE_LIMIT_WINDOW_S,
      budgets: { ANONYMOUS: config.RATE_LIMIT_ANONYMOUS, FREE_USER: config.RATE_LIMIT_FREE_USER, PREMIUM_USER: config.RATE_LIMIT_PREMIUM_USER },
      trustProxy: config.RATE_LIMIT_TRUST_PROXY,
      store: deps.rateLimitStore,
      // Ending a session must always be possible, whatever the caller spent.
      exempt: (method, path) => method === 'POST' && path.replace(/\/+$/, '') === '/auth/logout',
    }),
  );

  // Every handler reaches its dependencies as c.var.services (set synchronously: no extra await).
  const services = createRouteServices({ rpc, auth: deps.auth, supabaseAuth: deps.supabaseAuth, config });
  app.use((c, next) => {
    c.set('services', services);
    return next();
  });
  app.route('/metadata', metadataRouter());
  app.route('/discovery/domains', domainsRouter());
  app.route('/discovery', discoveryRouter());
  app.route('/snapshots', snapshotsRouter());
  app.route('/auth', authRouter(config.AUTH_PROVIDER));
  app.route('/user', journeysRouter());
  app.route('/search', searchRouter());
  app.route('/graph', graphRouter());

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'Access token from /auth/callback or /auth/refresh (or any HS256 token signed with SUPABASE_JWT_SECRET).',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'cookieAuth', {
    type: 'apiKey',
    in: 'cookie',
    name: 'svc-access-token',
    description: 'The HttpOnly access-token cookie set by /auth/callback and /auth/refresh.',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'serviceAuth', {
    type: 'apiKey',
    in: 'header',
    name: 'X-Service-Auth',
    description: 'Shared secret (SERVICE_AUTH_SECRET) for service-to-service reads.',
  });
  app.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: {
      title: API_TITLE,
      version: '1.0.0',
      description:
        'Backend of the Sparkpath microlearning platform. Errors always use {error:{code,message,details}}.',
    },
  });
  // The reference page's script is served from our own install: no CDN, works offline.
  app.get('/docs/scalar.js', async (c) => {
    scalarBundle ??= await readFile(SCALAR_BUNDLE, 'utf8');
    return c.body(scalarBundle, 200, { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'public, max-age=86400' });
  });
  app.get('/docs', Scalar({ url: '/openapi.json', pageTitle: `${API_TITLE} reference`, cdn: '/docs/scalar.js' }));
  // The learner explorer: a front end on the public API, served here so `npm start` shows one.
  app.route('/explore', explorerRouter({ callbackUrl: config.AUTH_CALLBACK_URL, production: config.NODE_ENV === 'production' }));

  app.notFound(createNotFoundHandler(() => app.routes));
  app.onError(createErrorHandler(logger));
  return app;
}

export type App = ReturnType<typeof createApp>;
