-- Shared rate-limit counters: fixed windows per key, purged after an hour.
begin;
select plan(6);

select tests.create_user('learner');

select is(private.hit_rate_limit('ip:192.0.2.1', 3600000) ->> 'count', '1', 'the first request of a window counts one');
select is(private.hit_rate_limit('ip:192.0.2.1', 3600000) ->> 'count', '2', 'the next one in the same window counts two');
select is(private.hit_rate_limit('user:other', 3600000) ->> 'count', '1', 'another key has its own counter');
select ok((private.hit_rate_limit('ip:192.0.2.1', 3600000) ->> 'reset_at')::bigint > (extract(epoch from now()) * 1000)::bigint,
  'reset_at lies in the future');
insert into app.rate_limit_counters values ('ip:old', now() - interval '2 hours', 7);
select is(private.purge_rate_limits(), 1, 'purge drops windows older than an hour');

-- acting as a signed-in learner
select tests.authenticate_as('learner');
select throws_ok($$ select private.hit_rate_limit('x', 1000) $$, '42501', null, 'request roles cannot touch the counters');
reset role;

select * from finish();
rollback;
