import type postgres from 'postgres';
import type { DatabasePool } from './pool.js';

/** An exposed api function as the rpc adapters need it. */
export interface ApiFunction {
  params: Map<string, string>; // parameter name -> SQL type
  /** Declared `stable` or `immutable`: it only reads, so a replica (or a GET) may answer it. */
  reads: boolean;
}

/**
 * The `api` schema's functions, introspected through `pool` on first use and kept: they change
 * only with a migration (deploy by migrating, then rolling the instances). A failed look-up is
 * tried again on the next call, e.g. after the database comes back.
 *
 * @example
 *   const catalog = createApiCatalog(pool);
 *   (await catalog()).get('list_domains')?.reads // => true
 */
export function createApiCatalog(pool: DatabasePool): () => Promise<Map<string, ApiFunction>> {
  let catalog: Promise<Map<string, ApiFunction>> | undefined;
  return () => {
    catalog ??= pool.run(introspect).catch((error: unknown) => {
      catalog = undefined;
      throw error;
    });
    return catalog;
  };
}

async function introspect(sql: postgres.Sql): Promise<Map<string, ApiFunction>> {
  const rows = await sql<{ name: string; arg_names: string[] | null; arg_types: string[]; reads: boolean }[]>`
    select p.proname as name,
           p.provolatile <> 'v' as reads,
           p.proargnames[1:p.pronargs] as arg_names,
           array(select pg_catalog.format_type(t, null)
                 from unnest(p.proargtypes::oid[]) with ordinality as a(t, i) order by i) as arg_types
    from pg_catalog.pg_proc p
    where p.pronamespace = 'api'::regnamespace`;
  const functions = new Map<string, ApiFunction>();
  for (const row of rows) {
    if (functions.has(row.name)) throw new Error(`api.${row.name} is overloaded; the rpc port needs unique names`);
    const params = new Map<string, string>();
    (row.arg_names ?? []).forEach((name, i) => params.set(name, row.arg_types[i]));
    functions.set(row.name, { params, reads: row.reads });
  }
  return functions;
}
