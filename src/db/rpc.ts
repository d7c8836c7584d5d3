import type { Database } from './database.types.js';

/**
 * The data-access port: every request reaches the database through one statement, which checks
 * the caller's session and runs one api function.
 * Handlers never see SQL; the adapter decides how the call travels: postgres-rpc.ts (the
 * login role's connection and the dispatcher) or data-api-rpc.ts (a Supabase project's Data API,
 * as the caller), chosen by DATA_API.
 */

/** The request role, verified JWT claims and request headers, forwarded the way PostgREST forwards them. */
export interface DbCaller {
  role: 'anon' | 'authenticated';
  /** The verified JWT payload as JSON text, or null for anonymous and service callers. */
  claims: string | null;
  /**
   * The verified access token those claims come from, as the caller sent it: what the Data API
   * transport forwards (`Authorization: Bearer`), so that PostgREST verifies it and sets the role
   * and claims itself. Absent for anonymous and service callers.
   */
  token?: string;
  /**
   * Request headers the database reads, lower-case names, as PostgREST's `request.headers`:
   * `x-service-auth` for a service caller, which the database checks again itself
   * (private.request_caller).
   */
  headers?: Readonly<Record<string, string>>;
}

/** The exposed api functions, their named arguments and return types, from `npm run db:types`. */
export type ApiFunctions = Database['api']['Functions'];
export type ApiFunctionName = keyof ApiFunctions & string;
export type ApiArgs<F extends ApiFunctionName> = ApiFunctions[F]['Args'];

/** The api functions that read snapshot content: they take an optional `snapshot_id`. */
export type SnapshotFunctionName = {
  [F in ApiFunctionName]: 'snapshot_id' extends keyof ApiArgs<F> ? F : never;
}[ApiFunctionName];

/** What a snapshot read answers: the snapshot that answered, and its body unless the client holds it. */
export interface SnapshotRead {
  /** Changes whenever the body could: the snapshot id (or, before any publish, a digest of them all). */
  version: string;
  snapshot_id: string | null;
  /** null only when `version` is one of the client's versions and the server holds no body for it. */
  body: string | null;
}

export interface Rpc {
  /** Calls `api.<fn>` with named arguments as `caller`; resolves to the JSON text it returns. */
  call<F extends ApiFunctionName>(fn: F, args: ApiArgs<F>, caller: DbCaller): Promise<string>;
  /**
   * A read of snapshot content in one statement: the session check, which snapshot answers
   * (as `caller`), and `api.<fn>` pinned to it, unless the server's snapshot cache or the
   * client (`clientVersions`, from If-None-Match) already holds that version's body.
   */
  readSnapshot<F extends SnapshotFunctionName>(fn: F, args: ApiArgs<F>, caller: DbCaller, clientVersions?: readonly string[]): Promise<SnapshotRead>;
  /** What the health endpoints report: each part the API depends on, ok or not. */
  health(): Promise<HealthChecks>;
}

export type HealthState = 'ok' | 'unavailable';
export interface HealthChecks {
  /** The database answers. */
  database: HealthState;
  /** Sign-in, refresh, logout and cleanup can run: their functions answer on the same pool. */
  sessions: HealthState;
  /** Present with DATABASE_READ_URL: the read replica answers (while it does not, the primary reads). */
  read_replica?: HealthState;
  /** Present with DATA_API=supabase: the project's Data API answers, which every request needs. */
  data_api?: HealthState;
}
