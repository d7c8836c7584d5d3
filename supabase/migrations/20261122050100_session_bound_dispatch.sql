-- The per-request transaction checks the session of every session-bound token.
--
-- Same signature and contract as the foundation's dispatcher; one addition: when the claims
-- carry `session_id`, that session must belong to `sub`, be active and be neither past its
-- absolute lifetime nor idle, else 28000 (401). This is what makes logout and refresh-token
-- reuse revoke an access token at once, whatever the API's signature cache remembers.
create or replace function private.dispatch(request_role text, claims text, call text, args jsonb)
returns text
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  body text;
  claims_doc jsonb;
  session_id uuid;
begin
  if dispatch.request_role not in ('anon', 'authenticated') then
    raise exception using errcode = '42501', message = 'unsupported request role';
  end if;
  if dispatch.call !~ '^api\.[a-z_][a-z0-9_]*\(' then
    raise exception using errcode = '42501', message = 'only api functions may be dispatched';
  end if;

  if coalesce(dispatch.claims, '') <> '' then
    claims_doc := dispatch.claims::jsonb;
    if claims_doc ? 'session_id' then
      begin
        session_id := (claims_doc ->> 'session_id')::uuid;
      exception when invalid_text_representation then
        session_id := null;
      end;
      -- Runs as the login role, before switching to the request role: RLS does not hide the row.
      if session_id is null
         or not private.session_is_live(session_id, nullif(claims_doc ->> 'sub', '')::uuid) then
        raise exception using errcode = '28000', message = 'Session is no longer active; sign in again';
      end if;
    end if;
  end if;

  perform pg_catalog.set_config('request.jwt.claims', coalesce(dispatch.claims, ''), true);
  perform pg_catalog.set_config('role', dispatch.request_role, true);

  execute 'select (' || dispatch.call || ')::text' into body using dispatch.args;
  return body;
end
$$;
comment on function private.dispatch(text, text, text, jsonb) is
  'Runs one api function as the request role with transaction-local JWT claims (the PostgREST contract) in one statement; refuses (28000) a session-bound token whose session is not live. Executable only by the API login role.';
revoke all on function private.dispatch(text, text, text, jsonb) from public, anon, authenticated, service_role;
