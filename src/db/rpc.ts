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

export type RpcArgs = Record<string, string | number | boolean | null | undefined | readonly string[] | Record<string, unknown> | unknown[]>;

export interface Rpc {
  /** Calls `api.<fn>` with named arguments as `caller`; resolves to the JSON text it returns. */
  call(fn: string, args: RpcArgs, caller: DbCaller): Promise<string>;
  /** Resolves when the database answers a trivial query within the health timeout. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
