-- private.peek_rate_limit: how much of a caller's window is used, without counting a request
-- (signed-in callers are charged only after their session check passed).
begin;
select plan(5);

select is(private.peek_rate_limit('user:peek', 3600000) ->> 'count', '0', 'an unseen key has used nothing');
do $$ begin perform private.hit_rate_limit('user:peek', 3600000); perform private.hit_rate_limit('user:peek', 3600000); end $$;
select is(private.peek_rate_limit('user:peek', 3600000) ->> 'count', '2', 'it reports the counted requests of the window');
select is(private.peek_rate_limit('user:peek', 3600000) ->> 'count', '2', 'looking counts nothing');
select is(private.peek_rate_limit('user:peek', 3600000) ->> 'reset_at', private.hit_rate_limit('user:peek', 3600000) ->> 'reset_at',
  'it names the same window end as a hit');

-- acting as authenticated
set local role authenticated;
select throws_ok($$ select private.peek_rate_limit('x', 1000) $$, '42501', null, 'request roles cannot read the counters');
reset role;

select * from finish();
rollback;
