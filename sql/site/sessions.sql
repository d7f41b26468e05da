-- The account site's sign-in: sign-up confirmed by an emailed link, sessions, password reset and invitations.
-- SECURITY DEFINER functions are the site's only way to the accounts tables; it connects as api_site, which may
-- execute the functions granted at the end of each file in sql/site/ and nothing else. Secrets never reach the
-- database: sessions and links are stored as SHA-256 of their random tokens, passwords as argon2id hashes made by
-- the site (src/site/passwords.ts). Errors: 28000 for a session that is not (or no longer) signed in, 22023 for a
-- link that is invalid, used or expired.

COMMENT ON SCHEMA site IS
  'The account site''s functions (docs/site.md): sign-in, sessions, keys, credits and usage of the signed-in client. Rebuilt from sql/site/ on every setup; tables live in accounts.';

CREATE OR REPLACE FUNCTION site.session_idle() RETURNS interval
  LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN interval '1 hour';
COMMENT ON FUNCTION site.session_idle() IS 'A session unused this long has ended (idle expiry).';

CREATE OR REPLACE FUNCTION site.session_lifetime() RETURNS interval
  LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN interval '12 hours';
COMMENT ON FUNCTION site.session_lifetime() IS 'A session ends this long after sign-in however much it is used (absolute expiry).';

CREATE OR REPLACE FUNCTION site.sessions_per_user() RETURNS integer
  LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN 10;
COMMENT ON FUNCTION site.sessions_per_user() IS 'Sessions a user may hold at once; a new sign-in ends the oldest beyond it.';

CREATE OR REPLACE FUNCTION site.link_lifetime(p_purpose text) RETURNS interval
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN CASE WHEN p_purpose = 'invite' THEN interval '7 days' ELSE interval '30 minutes' END;
COMMENT ON FUNCTION site.link_lifetime(text) IS
  'How long an emailed link works: 30 minutes to finish a sign-up or reset a password, 7 days for an operator''s invitation.';

-- Drops up to 100 expired sessions and links of anyone: each sign-in and each emailed link pays for a little
-- cleaning, so neither table grows with time.
CREATE OR REPLACE FUNCTION site.purge_expired() RETURNS void
  LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = accounts, pg_temp
AS $$
  DELETE FROM accounts.site_sessions
   WHERE token_hash IN (SELECT token_hash FROM accounts.site_sessions WHERE expires_at <= now() LIMIT 100);
  DELETE FROM accounts.site_tokens
   WHERE token_hash IN (SELECT token_hash FROM accounts.site_tokens WHERE expires_at <= now() LIMIT 100);
$$;
COMMENT ON FUNCTION site.purge_expired() IS 'Deletes up to 100 expired sessions and 100 expired links.';

-- The signed-in user of a live session; raises 28000 when the session is unknown, idle too long or too old.
CREATE OR REPLACE FUNCTION site.session_user(p_session bytea) RETURNS accounts.site_users
  LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = accounts, pg_temp
AS $$
DECLARE
  v accounts.site_users;
BEGIN
  SELECT u.* INTO v
    FROM accounts.site_sessions s JOIN accounts.site_users u ON u.id = s.user_id
   WHERE s.token_hash = p_session AND s.expires_at > now() AND s.last_seen_at > now() - site.session_idle();
  IF NOT FOUND THEN
    RAISE EXCEPTION 'not signed in' USING ERRCODE = '28000';
  END IF;
  RETURN v;
END $$;
COMMENT ON FUNCTION site.session_user(bytea) IS
  'The user of a live session (by SHA-256 of its cookie token); raises 28000 when it has ended or expired.';

CREATE OR REPLACE FUNCTION site.session_client(p_session bytea) RETURNS uuid
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = accounts, pg_temp
  RETURN (site.session_user(p_session)).client_id;
COMMENT ON FUNCTION site.session_client(bytea) IS 'The client of a live session; raises 28000 when it has ended or expired.';

-- Per request: the session's user and client, or no row when it has ended (an expired one is deleted). Use is
-- recorded at most once a minute, which is the precision of the idle expiry.
CREATE OR REPLACE FUNCTION site.touch_session(p_session bytea)
RETURNS TABLE (user_id uuid, client_id uuid, email text, name text, plan text, client_status text)
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = accounts, pg_temp
AS $$
#variable_conflict use_column
BEGIN
  DELETE FROM accounts.site_sessions s
   WHERE s.token_hash = p_session AND (s.expires_at <= now() OR s.last_seen_at <= now() - site.session_idle());
  UPDATE accounts.site_sessions s SET last_seen_at = now()
   WHERE s.token_hash = p_session AND s.last_seen_at < now() - interval '1 minute';
  RETURN QUERY
    SELECT u.id, u.client_id, u.email, c.name, c.plan, c.status
      FROM accounts.site_sessions s
      JOIN accounts.site_users u ON u.id = s.user_id
      JOIN accounts.clients c ON c.id = u.client_id
     WHERE s.token_hash = p_session;
END $$;
COMMENT ON FUNCTION site.touch_session(bytea) IS
  'The user and client of a live session, recording its use; no row (and the session deleted) once it has expired.';

-- A new session for a user whose password the site has just checked. The oldest sessions beyond
-- site.sessions_per_user() end.
CREATE OR REPLACE FUNCTION site.create_session(p_user_id uuid, p_session bytea) RETURNS void
  LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = accounts, pg_temp
AS $$
  SELECT site.purge_expired();
  INSERT INTO accounts.site_sessions (token_hash, user_id, expires_at)
  VALUES (p_session, p_user_id, now() + site.session_lifetime());
  DELETE FROM accounts.site_sessions
   WHERE user_id = p_user_id
     AND token_hash NOT IN (SELECT token_hash FROM accounts.site_sessions WHERE user_id = p_user_id
                             ORDER BY created_at DESC, token_hash LIMIT site.sessions_per_user());
$$;
COMMENT ON FUNCTION site.create_session(uuid, bytea) IS
  'Starts a session (SHA-256 of its cookie token) for a user whose password was checked; keeps the newest site.sessions_per_user().';

CREATE OR REPLACE FUNCTION site.end_session(p_session bytea) RETURNS void
  LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = accounts, pg_temp
AS $$ DELETE FROM accounts.site_sessions WHERE token_hash = p_session $$;
COMMENT ON FUNCTION site.end_session(bytea) IS 'Sign-out: ends this session, wherever its cookie is.';

CREATE OR REPLACE FUNCTION site.end_all_sessions(p_session bytea) RETURNS integer
  LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = accounts, pg_temp
AS $$
  WITH gone AS (
    DELETE FROM accounts.site_sessions
     WHERE user_id = (SELECT user_id FROM accounts.site_sessions WHERE token_hash = p_session)
    RETURNING 1
  )
  SELECT count(*)::int FROM gone
$$;
COMMENT ON FUNCTION site.end_all_sessions(bytea) IS 'Sign-out everywhere: ends every session of this session''s user; returns how many.';

-- Sign-in: the user and password hash for an email (any letter case), checked by the site with argon2.
CREATE OR REPLACE FUNCTION site.login(p_email text) RETURNS TABLE (user_id uuid, password_hash text)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = accounts, pg_temp
AS $$ SELECT id, password_hash FROM accounts.site_users WHERE lower(email) = lower(p_email) $$;
COMMENT ON FUNCTION site.login(text) IS
  'The user id and argon2id hash for an email (case-insensitive); no row for an unknown email, a null hash before an invited user sets one.';

CREATE OR REPLACE FUNCTION site.password_hash(p_session bytea) RETURNS text
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = accounts, pg_temp
  RETURN (site.session_user(p_session)).password_hash;
COMMENT ON FUNCTION site.password_hash(bytea) IS 'The signed-in user''s password hash, to check the current password before a change.';

-- Changing the password ends every session of the user, this one included, and every outstanding reset or
-- invitation link; p_new_session is the session this browser continues with.
CREATE OR REPLACE FUNCTION site.change_password(p_session bytea, p_password_hash text, p_new_session bytea) RETURNS void
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = accounts, pg_temp
AS $$
DECLARE
  v_user uuid := (site.session_user(p_session)).id;
BEGIN
  UPDATE accounts.site_users SET password_hash = p_password_hash, password_changed_at = now() WHERE id = v_user;
  DELETE FROM accounts.site_sessions WHERE user_id = v_user;
  DELETE FROM accounts.site_tokens WHERE user_id = v_user;
  PERFORM site.create_session(v_user, p_new_session);
END $$;
COMMENT ON FUNCTION site.change_password(bytea, text, bytea) IS
  'Sets the signed-in user''s password hash, ends all of the user''s sessions and links, and starts p_new_session.';

-- Sign-up, first step: keeps the pending account (name, email, password hash) behind a link emailed to the address.
-- Returns whether the email already has an account: then nothing is kept, and the site emails the owner instead;
-- the person signing up sees the same page either way.
CREATE OR REPLACE FUNCTION site.start_signup(p_email text, p_name text, p_password_hash text, p_token bytea) RETURNS boolean
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = accounts, pg_temp
AS $$
BEGIN
  IF p_name IS NULL OR length(btrim(p_name)) NOT BETWEEN 1 AND 200 THEN PERFORM core.bad_input('name: 1 to 200 characters'); END IF;
  IF p_email IS NULL OR length(p_email) > 254 OR p_email !~ '^[^@\s]+@[^@\s]+$' THEN
    PERFORM core.bad_input('email: not an email address');
  END IF;
  PERFORM site.purge_expired();
  IF EXISTS (SELECT FROM accounts.site_users WHERE lower(email) = lower(p_email)) THEN
    RETURN true;
  END IF;
  INSERT INTO accounts.site_tokens (token_hash, purpose, email, name, password_hash, expires_at)
  VALUES (p_token, 'signup', p_email, btrim(p_name), p_password_hash, now() + site.link_lifetime('signup'));
  RETURN false;
END $$;
COMMENT ON FUNCTION site.start_signup(text, text, text, bytea) IS
  'Keeps a pending sign-up behind an emailed link (SHA-256 of its token) for 30 minutes; true (and nothing kept) when the email already has an account.';

-- A link's purpose and email while it works (not used, not expired), without using it.
CREATE OR REPLACE FUNCTION site.check_link(p_token bytea) RETURNS TABLE (purpose text, email text)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = accounts, pg_temp
AS $$ SELECT purpose, email FROM accounts.site_tokens WHERE token_hash = p_token AND expires_at > now() $$;
COMMENT ON FUNCTION site.check_link(bytea) IS 'Purpose and email of an emailed link that still works; no row otherwise.';

-- Sign-up, second step: uses the link once, creates the client on the Free Trial (whose 500 credits the ledger
-- grants at creation, meter.grant_trial; nothing here takes an amount) and its sign-in, and starts p_session.
CREATE OR REPLACE FUNCTION site.finish_signup(p_token bytea, p_session bytea) RETURNS uuid
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = accounts, pg_temp
AS $$
DECLARE
  t accounts.site_tokens;
  v_client uuid;
  v_user uuid;
BEGIN
  DELETE FROM accounts.site_tokens WHERE token_hash = p_token AND purpose = 'signup' AND expires_at > now()
  RETURNING * INTO t;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'This link is invalid, used or expired.' USING ERRCODE = '22023';
  END IF;
  IF EXISTS (SELECT FROM accounts.site_users WHERE lower(email) = lower(t.email)) THEN
    RAISE EXCEPTION 'This email already has an account.' USING ERRCODE = '23505';
  END IF;
  INSERT INTO accounts.clients (name, email, plan) VALUES (t.name, t.email, 'free') RETURNING id INTO v_client;
  INSERT INTO accounts.site_users (client_id, email, password_hash, password_changed_at)
  VALUES (v_client, t.email, t.password_hash, now()) RETURNING id INTO v_user;
  DELETE FROM accounts.site_tokens WHERE purpose = 'signup' AND lower(email) = lower(t.email);
  PERFORM site.create_session(v_user, p_session);
  RETURN v_client;
END $$;
COMMENT ON FUNCTION site.finish_signup(bytea, bytea) IS
  'Uses a sign-up link once: creates the Free Trial client (500 credits) and its sign-in, starts the session; returns the client id.';

-- Password reset, first step: a link for the email's user, if there is one. The site answers the same either way
-- and sends the email only when a row comes back.
CREATE OR REPLACE FUNCTION site.start_reset(p_email text, p_token bytea) RETURNS TABLE (email text)
  LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = accounts, pg_temp
AS $$
  SELECT site.purge_expired();
  INSERT INTO accounts.site_tokens (token_hash, purpose, user_id, email, expires_at)
  SELECT p_token, 'reset', u.id, u.email, now() + site.link_lifetime('reset')
    FROM accounts.site_users u WHERE lower(u.email) = lower(p_email)
  RETURNING email;
$$;
COMMENT ON FUNCTION site.start_reset(text, bytea) IS
  'Keeps a 30-minute password-reset link (SHA-256 of its token) for the email''s user; returns the email, or no row when there is no such user.';

-- An operator's invitation (`admin client invite`, over the owner connection): the client's sign-in, made with the
-- client's email if it has none yet, and a 7-day link to set its password.
CREATE OR REPLACE FUNCTION site.start_invite(p_client_id uuid, p_token bytea) RETURNS TABLE (email text, name text)
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = accounts, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  c accounts.clients;
  v_user uuid;
BEGIN
  SELECT * INTO c FROM accounts.clients WHERE id = p_client_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'client % not found', p_client_id USING ERRCODE = 'P0002';
  END IF;
  SELECT id INTO v_user FROM accounts.site_users WHERE client_id = p_client_id;
  IF v_user IS NULL THEN
    IF EXISTS (SELECT FROM accounts.site_users WHERE lower(site_users.email) = lower(c.email)) THEN
      RAISE EXCEPTION 'another account already signs in with % ', c.email USING ERRCODE = '23505';
    END IF;
    INSERT INTO accounts.site_users (client_id, email) VALUES (p_client_id, c.email) RETURNING id INTO v_user;
  END IF;
  PERFORM site.purge_expired();
  RETURN QUERY
    INSERT INTO accounts.site_tokens AS t (token_hash, purpose, user_id, email, expires_at)
    SELECT p_token, 'invite', u.id, u.email, now() + site.link_lifetime('invite') FROM accounts.site_users u WHERE u.id = v_user
    RETURNING t.email, c.name;
END $$;
COMMENT ON FUNCTION site.start_invite(uuid, bytea) IS
  'An operator''s invitation: makes the client''s sign-in (with the client''s email) if missing and a 7-day link to set its password. Owner only.';

-- Password reset or invitation, second step: uses the link once, sets the password, ends every session and every
-- other link of the user. The person then signs in with the new password.
CREATE OR REPLACE FUNCTION site.finish_reset(p_token bytea, p_password_hash text) RETURNS text
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = accounts, pg_temp
AS $$
DECLARE
  t accounts.site_tokens;
BEGIN
  DELETE FROM accounts.site_tokens
   WHERE token_hash = p_token AND purpose IN ('reset', 'invite') AND expires_at > now()
  RETURNING * INTO t;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'This link is invalid, used or expired.' USING ERRCODE = '22023';
  END IF;
  UPDATE accounts.site_users SET password_hash = p_password_hash, password_changed_at = now() WHERE id = t.user_id;
  DELETE FROM accounts.site_sessions WHERE user_id = t.user_id;
  DELETE FROM accounts.site_tokens WHERE user_id = t.user_id;
  RETURN t.email;
END $$;
COMMENT ON FUNCTION site.finish_reset(bytea, text) IS
  'Uses a reset or invitation link once: sets the password hash, ends all of the user''s sessions and links; returns the email.';

REVOKE ALL ON ALL FUNCTIONS IN SCHEMA site FROM PUBLIC;
GRANT USAGE ON SCHEMA site TO api_site;
GRANT EXECUTE ON FUNCTION site.touch_session(bytea), site.create_session(uuid, bytea), site.end_session(bytea),
  site.end_all_sessions(bytea), site.login(text), site.password_hash(bytea), site.change_password(bytea, text, bytea),
  site.start_signup(text, text, text, bytea), site.check_link(bytea), site.finish_signup(bytea, bytea),
  site.start_reset(text, bytea), site.finish_reset(bytea, text)
  TO api_site;
