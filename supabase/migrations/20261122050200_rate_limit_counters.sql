-- Shared rate-limit counters for several API instances (RATE_LIMIT_STORE=postgres).
--
-- Fixed windows per caller key. Unlogged: counters are disposable, and skipping the WAL keeps
-- the per-request upsert cheap. Only the API's login role touches them, through the functions.
create unlogged table app.rate_limit_counters (
  key text not null check (pg_catalog.length(key) <= 200),
  window_start timestamptz not null,
  count integer not null,
  primary key (key, window_start)
);
comment on table app.rate_limit_counters is 'Fixed-window request counters shared by API instances (RATE_LIMIT_STORE=postgres).';
alter table app.rate_limit_counters enable row level security;

-- Counts one request for `key` in the current window of `window_ms`; returns {count, reset_at}
-- (reset_at in epoch milliseconds).
create function private.hit_rate_limit(key text, window_ms integer)
returns jsonb
language sql
volatile
security definer
set search_path = ''
as $$
  with bounds as (
    select pg_catalog.to_timestamp(
             pg_catalog.floor(extract(epoch from pg_catalog.clock_timestamp()) * 1000 / hit_rate_limit.window_ms)
             * hit_rate_limit.window_ms / 1000.0) as start),
  hit as (
    insert into app.rate_limit_counters as c (key, window_start, count)
    select hit_rate_limit.key, b.start, 1 from bounds b
    on conflict on constraint rate_limit_counters_pkey do update set count = c.count + 1
    returning c.count, c.window_start)
  select pg_catalog.jsonb_build_object(
    'count', h.count,
    'reset_at', (extract(epoch from h.window_start) * 1000)::bigint + hit_rate_limit.window_ms)
  from hit h
$$;
comment on function private.hit_rate_limit(text, integer) is 'Counts one request in the caller''s current fixed window; returns {count, reset_at}.';
revoke all on function private.hit_rate_limit(text, integer) from public, anon, authenticated, service_role;

-- Drops windows that ended more than an hour ago (run by the server's cleanup interval or pg_cron).
create function private.purge_rate_limits()
returns integer
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  purged integer;
begin
  delete from app.rate_limit_counters c where c.window_start < pg_catalog.now() - interval '1 hour';
  get diagnostics purged = row_count;
  return purged;
end
$$;
comment on function private.purge_rate_limits() is 'Deletes rate-limit windows older than an hour; returns how many.';
revoke all on function private.purge_rate_limits() from public, anon, authenticated, service_role;
