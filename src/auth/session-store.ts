import type { DatabasePool } from '../db/pool.js';
import type { SessionClaims } from './access-tokens.js';

/**
 * The database port for sign-in and sessions, next to the rpc port on the same pool (which
 * outlives database restarts: every operation takes the pool in service at that moment).
 *
 * Why a second port: `rpc.call` dispatches only `api.*` functions as anon/authenticated, with
 * claims the API verified. Sign-in and refresh happen before any verified claims exist, so their
 * functions live in `private` (never exposed, not executable by request roles) and run as the
 * API's login role. Keeping every such call here makes that privileged surface one file (the
 * only other caller of `private` is src/db/rate-limit-store.ts, for the shared counters).
 * Raw tokens never pass through here: only their SHA-256 hashes, and a rotated token's successor
 * set sealed with a key derived from the old token (auth-service.ts).
 */
export interface SignInInput {
  provider: string;
  providerUserId: string;
  email: string;
  displayName: string;
  avatarUrl: string | null;
  userAgent: string | null;
  ipAddress: string | null;
  refreshHash: string;
  accessTtlSeconds: number;
  idleTimeoutSeconds: number;
  maxLifetimeSeconds: number;
}

export interface SessionGrant {
  session_id: string;
  claims: SessionClaims;
  access_expires_at: number;
}

export interface SignInResult extends SessionGrant {
  user: { id: string; email: string; display_name: string; provider: string };
  is_new_user: boolean;
}

export type RefreshResult =
  | ({ status: 'ok' } & SessionGrant)
  /** A retry inside the grace window: the successor set already issued, sealed for the old token's holder. */
  | { status: 'replay'; session_id: string; sealed: string }
  | { status: 'invalid' | 'expired' | 'revoked'; reason?: string };

export interface OAuthAttempt {
  provider: string;
  code_verifier: string;
  nonce: string | null;
  redirect_url: string;
}

export interface SessionStore {
  startOAuthAttempt(input: { provider: string; stateHash: string; codeVerifier: string; nonce: string | null; redirectUrl: string; browserHash: string; ttlSeconds: number }): Promise<void>;
  consumeOAuthAttempt(stateHash: string, browserHash: string | null): Promise<OAuthAttempt>;
  /** One transaction: profile + session + refresh hash + event, then `sign` and the access hash. */
  signIn(input: SignInInput, sign: (grant: SessionGrant) => Promise<{ accessHash: string }>): Promise<SignInResult>;
  /**
   * One transaction: rotation, then `sign`, the access hash and the sealed successor set (kept for
   * retries inside the grace window); failures commit (revocation).
   */
  refresh(input: { refreshHash: string; newRefreshHash: string; graceSeconds: number; accessTtlSeconds: number }, sign: (grant: SessionGrant) => Promise<{ accessHash: string; sealedSuccessor?: string }>): Promise<RefreshResult>;
  /** Logout for any accepted token (its verified claims JSON): ends its session, or records it. */
  signOut(claims: string): Promise<void>;
  cleanup(): Promise<{ sessions_deactivated: number; oauth_attempts_deleted: number }>;
  setUserAccess(userId: string, userRole: string | null, plan: string | null): Promise<void>;
  /** Resolves when the database answers and the sign-in functions are there for this login role. */
  ready(): Promise<void>;
}

export function createSessionStore(pool: DatabasePool): SessionStore {
  return {
    async startOAuthAttempt(input) {
      await pool.run((sql) => sql`select private.start_oauth_attempt(${input.provider}, ${input.stateHash}, ${input.codeVerifier},
        ${input.nonce}, ${input.redirectUrl}, ${input.browserHash}, ${input.ttlSeconds})`);
    },
    async consumeOAuthAttempt(stateHash, browserHash) {
      const [row] = await pool.run((sql) => sql<{ attempt: OAuthAttempt }[]>`select private.consume_oauth_attempt(${stateHash}, ${browserHash}) as attempt`);
      return row.attempt;
    },
    signIn(input, sign) {
      return pool.run(
        (sql) =>
          sql.begin(async (tx) => {
            const [row] = await tx<{ result: SignInResult }[]>`
              select private.sign_in(${input.provider}, ${input.providerUserId}, ${input.email}, ${input.displayName},
                ${input.avatarUrl}, ${input.userAgent}, ${input.ipAddress}, ${input.refreshHash},
                ${input.accessTtlSeconds}, ${input.idleTimeoutSeconds}, ${input.maxLifetimeSeconds}) as result`;
            const { accessHash } = await sign(row.result);
            await tx`select private.record_access_token(${row.result.session_id}, ${accessHash})`;
            return row.result;
          }) as Promise<SignInResult>,
      );
    },
    refresh(input, sign) {
      return pool.run(
        (sql) =>
          sql.begin(async (tx) => {
            const [row] = await tx<{ result: RefreshResult }[]>`
              select private.refresh_session(${input.refreshHash}, ${input.newRefreshHash}, ${input.graceSeconds}, ${input.accessTtlSeconds}) as result`;
            if (row.result.status !== 'ok') return row.result;
            const { accessHash, sealedSuccessor } = await sign(row.result);
            await tx`select private.record_access_token(${row.result.session_id}, ${accessHash})`;
            if (sealedSuccessor) await tx`select private.seal_refresh_successor(${input.refreshHash}, ${sealedSuccessor})`;
            return row.result;
          }) as Promise<RefreshResult>,
      );
    },
    async signOut(claims) {
      await pool.run((sql) => sql`select private.sign_out(${claims}::text::jsonb)`);
    },
    async cleanup() {
      const [row] = await pool.run((sql) => sql<{ result: { sessions_deactivated: number; oauth_attempts_deleted: number } }[]>`select private.cleanup_sessions() as result`);
      return row.result;
    },
    async setUserAccess(userId, userRole, plan) {
      await pool.run((sql) => sql`select private.set_user_access(${userId}, ${userRole}, ${plan})`);
    },
    async ready() {
      // Raises (42883) when a function is missing; false when the login role may not run it.
      const [row] = await pool.run((sql) => sql<{ ready: boolean }[]>`
        select pg_catalog.has_function_privilege('private.refresh_session(text, text, integer, integer)', 'execute')
           and pg_catalog.has_function_privilege('private.sign_out(jsonb)', 'execute') as ready`);
      if (!row?.ready) throw new Error('the sign-in functions are not executable by the API login role');
    },
  };
}
