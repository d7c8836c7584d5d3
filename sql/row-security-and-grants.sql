-- Who may read and write what: per table of `app`, whether row-level security is on, its
-- policies (command, roles, condition) and the privileges each request role holds.
--   psql -d <db> -f sql/row-security-and-grants.sql
select c.relname as "table",
       c.relrowsecurity as rls,
       p.polname as policy,
       case p.polcmd when 'r' then 'select' when 'a' then 'insert' when 'w' then 'update' when 'd' then 'delete' else 'all' end as command,
       (select pg_catalog.string_agg(case when r = 0 then 'public' else r::regrole::text end, ', ') from pg_catalog.unnest(p.polroles) r) as roles,
       pg_catalog.pg_get_expr(p.polqual, p.polrelid) as using,
       pg_catalog.pg_get_expr(p.polwithcheck, p.polrelid) as with_check
from pg_catalog.pg_class c
left join pg_catalog.pg_policy p on p.polrelid = c.oid
where c.relnamespace = 'app'::regnamespace and c.relkind = 'r'
order by c.relname, p.polname;

select c.relname as "table", a.grantee::regrole as role,
       pg_catalog.string_agg(a.privilege_type, ', ' order by a.privilege_type) as privileges
from pg_catalog.pg_class c, pg_catalog.aclexplode(c.relacl) a
where c.relnamespace = 'app'::regnamespace and c.relkind in ('r', 'v') and a.grantee <> c.relowner
group by 1, 2
order by 1, 2;
