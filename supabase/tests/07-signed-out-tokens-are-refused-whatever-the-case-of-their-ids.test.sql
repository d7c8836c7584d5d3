-- A token without a session of ours is signed out by the digest of its claims. The API forwards
-- claims with `sub` and `session_id` lower-cased; PostgREST forwards them as signed. The digest
-- reads ids in lower case, so a token signed out through one door is refused through the other.
begin;
select plan(6);

select tests.create_user('casey');

create temp table claims as select
  tests.get_claims('casey',
    jsonb_build_object('iss', 'https://project.supabase.co/auth/v1', 'jti', 'upper',
      'session_id', upper(gen_random_uuid()::text), 'exp', extract(epoch from now())::bigint + 3600)) as raw;
update claims set raw = raw || jsonb_build_object('sub', upper(raw ->> 'sub'));
grant select on claims to authenticated;

select is(private.access_token_digest((select raw from claims)),
  private.access_token_digest((select raw || jsonb_build_object('sub', lower(raw ->> 'sub'), 'session_id', lower(raw ->> 'session_id')) from claims)),
  'upper- and lower-case ids give one digest');
select isnt(private.access_token_digest((select raw from claims)),
  private.access_token_digest((select raw || '{"jti":"other"}' from claims)),
  'another token (another jti) has another digest');

-- Signed out through the API: claims as the API forwards them (ids lower-cased)
select is(private.sign_out((select raw || jsonb_build_object('sub', lower(raw ->> 'sub'), 'session_id', lower(raw ->> 'session_id')) from claims)),
  '{"success":true,"message":"Signed out"}'::jsonb, 'the token is signed out through the API');

-- acting as the token's holder through PostgREST: the claims as signed, upper-case ids
select set_config('role', 'authenticated', true), set_config('request.jwt.claims', (select raw::text from claims), true);
select throws_ok($$ select private.check_request() $$, 'PT401', 'Session is no longer active; sign in again',
  'PostgREST''s pre-request hook refuses it');
select is(api.get_session(), '{"authenticated":false,"user":null,"session":null}'::jsonb,
  'and /rpc/get_session reads it as "not signed in"');
reset role;

-- Signed out again with the upper-case claims: already signed out
select throws_ok(format($$ select private.sign_out(%L) $$, (select raw from claims)), 'PT401', null,
  'a second logout, whichever case its ids are in, finds it already signed out');

select * from finish();
rollback;
