-- Every function of the exposed `api` schema: its signature, what it returns, volatility,
-- security, which request roles may call it, and its comment. To read or change one, grep its
-- name in supabase/schemas/.
--   psql -d <db> -f sql/api-functions.sql
select p.oid::regprocedure as function,
       pg_catalog.pg_get_function_result(p.oid) as returns,
       case p.provolatile when 'i' then 'immutable' when 's' then 'stable' else 'volatile' end as volatility,
       case when p.prosecdef then 'definer' else 'invoker' end as security,
       (select pg_catalog.string_agg(a.grantee::regrole::text, ', ' order by a.grantee::regrole::text)
          from pg_catalog.aclexplode(p.proacl) a
          where a.privilege_type = 'EXECUTE' and a.grantee <> p.proowner) as callable_by,
       pg_catalog.obj_description(p.oid, 'pg_proc') as comment
from pg_catalog.pg_proc p
where p.pronamespace = 'api'::regnamespace
order by p.proname;
