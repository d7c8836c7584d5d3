-- OAuth attempts (/auth/login, /auth/callback): an attempt is bound to the browser that started
-- it, used at most once, refused once expired or unknown, and forgets its PKCE verifier when used.
begin;
select plan(8);

-- acting as the API's login role
select private.start_oauth_attempt('google', repeat('1', 64), 'verifier', 'nonce', 'https://app.example.com/', repeat('2', 64), 600);
select throws_ok($$ select private.consume_oauth_attempt(repeat('1', 64), repeat('3', 64)) $$, '22023',
  'This sign-in attempt was started in another browser', 'an attempt is bound to the browser that started it');
select is(private.consume_oauth_attempt(repeat('1', 64), repeat('2', 64)) ->> 'code_verifier', 'verifier',
  'consuming an attempt returns its PKCE verifier');
select throws_ok($$ select private.consume_oauth_attempt(repeat('1', 64), repeat('2', 64)) $$, '22023',
  'This sign-in attempt was already used', 'an attempt is single use');
select is((select code_verifier from app.oauth_attempts where state_hash = repeat('1', 64)), null, 'a consumed attempt keeps no verifier');
select throws_ok($$ select private.consume_oauth_attempt(repeat('9', 64), repeat('2', 64)) $$, '22023',
  'The state parameter does not match any sign-in attempt', 'an unknown state is refused');
select private.start_oauth_attempt('github', repeat('4', 64), 'v', null, 'https://app.example.com/', repeat('2', 64), 600);
update app.oauth_attempts set expires_at = now() - interval '1 second' where state_hash = repeat('4', 64);
select throws_ok($$ select private.consume_oauth_attempt(repeat('4', 64), repeat('2', 64)) $$, '22023',
  'This sign-in attempt has expired; start again', 'an expired attempt is refused');

select lives_ok($$ select private.start_oauth_attempt('dev', repeat('5', 64), 'v', 'n', 'http://localhost:3000/explore', repeat('2', 64), 600) $$,
  'the development provider dev starts attempts like the real providers');
select throws_ok($$ select private.start_oauth_attempt('facebook', repeat('6', 64), 'v', null, 'https://app.example.com/', repeat('2', 64), 600) $$, '23514',
  null, 'an attempt names one of the known providers');

select * from finish();
rollback;
