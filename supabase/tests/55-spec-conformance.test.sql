-- Spec conformance (issue 23, 20261124020000_spec_conformance.sql): one successor per refresh
-- token, replayed to retries inside the grace window; logout of tokens without a session here;
-- the session object of GET /auth/session; the cleanup routine; alphabetical order.
begin;
select plan(31);

-- ---------------------------------------------------------------------------------------------
-- 2. One successor per refresh token (acting as the API's login role)
-- ---------------------------------------------------------------------------------------------
create temp table signed (label text primary key, r jsonb);
insert into signed select 'ada', private.sign_in('github', 'ada-sub', 'ada@example.com', 'Ada', null, null, null,
  repeat('a', 64), 3600, 3610, 2592000);
select set_config('t.ada', (select r -> 'user' ->> 'id' from signed), true);
select set_config('t.s1', (select r ->> 'session_id' from signed), true);

select is(private.refresh_session(repeat('a', 64), repeat('b', 64), 10, 3600) ->> 'status', 'ok',
  'an unused refresh token rotates');
select private.seal_refresh_successor(repeat('a', 64), 'sealed-successor-of-a');
select is(private.refresh_session(repeat('a', 64), repeat('c', 64), 10, 3600),
  jsonb_build_object('status', 'replay', 'session_id', current_setting('t.s1')::uuid, 'sealed', 'sealed-successor-of-a'),
  'a retry inside the grace window gets the sealed successor back');
select is((select count(*)::int from app.refresh_tokens c join app.refresh_tokens p on p.id = c.parent_id
           where p.token_hash = repeat('a', 64)), 1, 'and no second child is minted');
select is((select count(*)::int from app.refresh_tokens where token_hash = repeat('c', 64)), 0,
  'the retry''s proposed token is never stored');
select private.seal_refresh_successor(repeat('b', 64), 'not-rotated');
select is((select successor_sealed from app.refresh_tokens where token_hash = repeat('b', 64)), null,
  'a token that has not been rotated keeps no successor');

update app.refresh_tokens set rotated_at = rotated_at - interval '11 seconds' where token_hash = repeat('a', 64);
select is(private.refresh_session(repeat('a', 64), repeat('d', 64), 10, 3600),
  '{"status":"revoked","reason":"refresh_token_reuse"}'::jsonb, 'after the grace window a used token is reuse');
select is((select count(*)::int from app.refresh_tokens where session_id = current_setting('t.s1')::uuid
           and (revoked_at is null or successor_sealed is not null)), 0,
  'reuse revokes the whole family and drops every sealed successor');

-- A rotation whose transaction never sealed a successor cannot be replayed: reuse.
insert into signed select 'ada2', private.sign_in('github', 'ada-sub', 'ada@example.com', 'Ada', null, null, null,
  repeat('e', 64), 3600, 3610, 2592000);
select private.refresh_session(repeat('e', 64), repeat('f', 64), 10, 3600);
select is(private.refresh_session(repeat('e', 64), repeat('0', 64), 10, 3600) ->> 'reason', 'refresh_token_reuse',
  'a used token with nothing to replay is reuse, even inside the grace window');

-- ---------------------------------------------------------------------------------------------
-- 7. Logout of a token without a session here
-- ---------------------------------------------------------------------------------------------
insert into signed select 'ours', private.sign_in('github', 'ada-sub', 'ada@example.com', 'Ada', null, null, null,
  repeat('2', 64), 3600, 3610, 2592000);
create temp table tokens (label text primary key, claims jsonb);
insert into tokens values
  ('foreign', jsonb_build_object('sub', 'aaaaaaaa-0000-4000-8000-00000000000a', 'role', 'authenticated',
     'iss', 'https://project.supabase.co/auth/v1', 'iat', extract(epoch from now())::bigint - 5,
     'exp', extract(epoch from now())::bigint + 3600, 'app_metadata', '{"provider":"email"}'::jsonb)),
  ('foreign-other', jsonb_build_object('sub', 'aaaaaaaa-0000-4000-8000-00000000000a', 'role', 'authenticated',
     'iss', 'https://project.supabase.co/auth/v1', 'jti', 'second', 'exp', extract(epoch from now())::bigint + 3600)),
  ('foreign-session', jsonb_build_object('sub', 'aaaaaaaa-0000-4000-8000-00000000000b', 'role', 'authenticated',
     'iss', 'https://project.supabase.co/auth/v1', 'session_id', 'cccccccc-0000-4000-8000-00000000000c',
     'exp', extract(epoch from now())::bigint + 3600)),
  ('ours', (select r -> 'claims' from signed where label = 'ours')
     || jsonb_build_object('iss', 'sparkpath', 'exp', extract(epoch from now())::bigint + 3600));
create function pg_temp.claims(label text) returns jsonb language sql as $$ select claims from tokens where tokens.label = claims.label $$;

select is(private.request_live_for(pg_temp.claims('foreign')), 'Infinity'::double precision,
  'a token without a session here passes until it is signed out');
select is(private.sign_out(pg_temp.claims('foreign')), '{"success":true,"message":"Signed out"}'::jsonb,
  'signing it out succeeds');
select is(private.request_live_for(pg_temp.claims('foreign')), null, 'from then on request_live_for refuses it');
select set_config('request.jwt.claims', pg_temp.claims('foreign')::text, true);
select throws_ok($$ select private.check_request() $$, '28000', 'Session is no longer active; sign in again',
  'and so does check_request, the one session check of every request');
select set_config('request.jwt.claims', '', true);
select is(private.request_live_for(pg_temp.claims('foreign-other')), 'Infinity'::double precision,
  'another token of the same user is not affected');
select throws_ok($$ select private.sign_out(pg_temp.claims('foreign')) $$, '28000', 'Session is no longer active',
  'a second logout with the same token is refused');
select is((select expires_at from app.revoked_access_tokens where user_id = 'aaaaaaaa-0000-4000-8000-00000000000a'),
  to_timestamp((pg_temp.claims('foreign') ->> 'exp')::double precision), 'it is kept until the token expires');
select is((select event_type from app.outbox_events where aggregate_id = 'aaaaaaaa-0000-4000-8000-00000000000a'),
  'identity.user_logged_out', 'the logout is written to the outbox');

select private.sign_out(pg_temp.claims('foreign-session'));
select is(private.request_live_for(pg_temp.claims('foreign-session')), null,
  'a token naming another issuer''s session is recorded and refused the same way');

select private.sign_out(pg_temp.claims('ours'));
select is((select end_reason from app.sessions where id = (pg_temp.claims('ours') ->> 'session_id')::uuid), 'logout',
  'a token of a session here ends that session instead');
select is((select count(*)::int from app.revoked_access_tokens
           where claims_digest = private.access_token_digest(pg_temp.claims('ours'))), 0,
  'and is not recorded as a session-less token');

select ok((select relrowsecurity from pg_class where oid = 'app.revoked_access_tokens'::regclass)
          and not has_table_privilege('authenticated', 'app.revoked_access_tokens', 'select')
          and not has_table_privilege('anon', 'app.revoked_access_tokens', 'select'),
  'request roles cannot read the signed-out tokens');
select has_trigger('app', 'revoked_access_tokens', 'revoked_access_tokens_notify_signed_out',
  'a sign-out notifies sparkpath_sessions so API instances stop vouching for the token');

-- ---------------------------------------------------------------------------------------------
-- 7. GET /auth/session: a session object for every authenticated caller
-- ---------------------------------------------------------------------------------------------
select set_config('t.other', pg_temp.claims('foreign-other')::text, true);
select set_config('t.foreign', pg_temp.claims('foreign')::text, true);
-- acting as the holder of a token without a session here
set local role authenticated;
select set_config('request.jwt.claims', current_setting('t.other'), true);
select is((select api.get_session() -> 'session'),
  jsonb_build_object('id', left(encode(sha256(convert_to(current_setting('t.other')::jsonb::text, 'UTF8')), 'hex'), 32)::uuid,
    'provider', 'https://project.supabase.co/auth/v1',
    'expires_at', to_timestamp((current_setting('t.other')::jsonb ->> 'exp')::double precision),
    'created_at', to_timestamp((current_setting('t.other')::jsonb ->> 'exp')::double precision)),
  'without a session row the session is built from the claims (no iat: created_at falls back to exp)');
select is((select api.get_session() -> 'user'),
  jsonb_build_object('id', 'aaaaaaaa-0000-4000-8000-00000000000a', 'email', null, 'display_name', '', 'provider', null, 'avatar_url', null),
  'a user without a profile here is described from the token');
-- acting as the holder of a Supabase Auth token with app_metadata.provider and iat
select set_config('request.jwt.claims', current_setting('t.foreign'), true);
select is((select api.get_session() -> 'session' ->> 'provider'), 'email', 'the provider comes from app_metadata');
-- acting as anon
set local role anon;
select set_config('request.jwt.claims', '', true);
select is(api.get_session(), '{"authenticated":false,"user":null,"session":null}'::jsonb, 'anonymous callers get no session');
reset role;

-- ---------------------------------------------------------------------------------------------
-- 3. The cleanup routine ends sessions whose access token expired without a refresh
-- ---------------------------------------------------------------------------------------------
insert into signed select 'idle', private.sign_in('github', 'idle-sub', 'idle@example.com', 'Idle', null, null, null,
  repeat('1', 64), 30, 40, 2592000);
update app.sessions set last_activity_at = now() - interval '45 seconds', access_expires_at = now() - interval '15 seconds'
where id = (select (r ->> 'session_id')::uuid from signed where label = 'idle');
insert into app.revoked_access_tokens (claims_digest, user_id, expires_at)
values (repeat('9', 64), 'aaaaaaaa-0000-4000-8000-00000000000a', now() - interval '1 second');
select ok((private.cleanup_sessions() ->> 'sessions_deactivated')::int >= 1, 'the cleanup deactivates sessions');
select is((select end_reason from app.sessions where id = (select (r ->> 'session_id')::uuid from signed where label = 'idle')),
  'idle', 'including one whose 30 s access token expired 15 s ago without a refresh (idle limit 40 s)');
select is((select count(*)::int from app.revoked_access_tokens where claims_digest = repeat('9', 64)), 0,
  'and forgets signed-out tokens that have expired');

-- ---------------------------------------------------------------------------------------------
-- 6. Alphabetical order
-- ---------------------------------------------------------------------------------------------
select is((select collprovider::text from pg_collation where collname = 'alphabetical' and collnamespace = 'app'::regnamespace), 'i',
  'app.alphabetical is an ICU collation');
select is(
  (select array_agg(t order by t collate app.alphabetical)
   from unnest(array['LLM Applications', 'Layout', 'HTTP Fundamentals', 'How Transformers Work', 'apis', 'Éclairs', 'Edges', 'zebra']) t),
  array['apis', 'Éclairs', 'Edges', 'How Transformers Work', 'HTTP Fundamentals', 'Layout', 'LLM Applications', 'zebra'],
  'it orders case-insensitively with accents among their letters');

insert into app.snapshots (id, name, version_label, status, published_at) values
  ('55000000-0000-4000-8000-000000000001', 'alphabet', 'v1', 'published', now());
update app.snapshots set status = 'archived' where status = 'published' and id <> '55000000-0000-4000-8000-000000000001';
insert into app.domains (snapshot_id, id, slug, name, is_published) values
  ('55000000-0000-4000-8000-000000000001', '55000000-0000-4000-8000-0000000000d1', 'web', 'web', true),
  ('55000000-0000-4000-8000-000000000001', '55000000-0000-4000-8000-0000000000d2', 'ethics', 'Éthique', true),
  ('55000000-0000-4000-8000-000000000001', '55000000-0000-4000-8000-0000000000d3', 'english', 'English', true),
  ('55000000-0000-4000-8000-000000000001', '55000000-0000-4000-8000-0000000000d4', 'data', 'Data', true);
-- acting as anon
set local role anon;
select is(
  (select array_agg(d ->> 'name') from jsonb_array_elements(api.list_domains(1, 20, '55000000-0000-4000-8000-000000000001') -> 'data') d),
  array['Data', 'English', 'Éthique', 'web'],
  'api.list_domains lists domains in that order');
reset role;

select * from finish();
rollback;
