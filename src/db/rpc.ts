import type { Database } from './database.types.js';

/**
 * The data-access port: every request reaches the database through one api function call.
 * Handlers never see SQL; the adapter decides how the call travels (see postgres-rpc.ts).
 */

/** The request role and verified JWT claims, forwarded the way PostgREST forwards them. */
export interface DbCaller {
  role: 'anon' | 'authenticated';
  /** The verified JWT payload as JSON text, or null for anonymous and service callers. */
  claims: string | null;
}

/** The exposed api functions, their named arguments and return types, from `npm run db:types`. */
export type ApiFunctions = Database['api']['Functions'];
export type ApiFunctionName = keyof ApiFunctions & string;
export type ApiArgs<F extends ApiFunctionName> = ApiFunctions[F]['Args'];

export interface Rpc {
  /** Calls `api.<fn>` with named arguments as `caller`; resolves to the JSON text it returns. */
  call<F extends ApiFunctionName>(fn: F, args: ApiArgs<F>, caller: DbCaller): Promise<string>;
  /** Resolves when the database answers a trivial query within the health timeout. */
  ping(): Promise<void>;
  close(): Promise<void>;
  /**
   * This process changed a session (refresh, logout, cleanup): an adapter that vouches for
   * sessions in memory (cached-rpc.ts) must ask the database again.
   */
  forgetSessions?(): void;
}
