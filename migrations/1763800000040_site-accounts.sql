-- Up Migration
-- The account site (/account): its sign-in identities, sessions and emailed single-use links, and the role the
-- site's writes connect as. api_site executes only the SECURITY DEFINER functions of schema site (sql/site/), none of
-- which takes an amount of credits from the caller; grants are issued by sql/site/ after every apply.
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'api_site') THEN
    CREATE ROLE api_site LOGIN NOINHERIT;
  END IF;
END $$;

-- One sign-in per client. The password is an argon2id hash (PHC string); it is null for a client the operator made
-- with the CLI until the invited person sets one.
CREATE TABLE accounts.site_users (
  id                   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  client_id            uuid NOT NULL UNIQUE REFERENCES accounts.clients(id),
  email                text NOT NULL CHECK (length(email) <= 254 AND email ~ '^[^@\s]+@[^@\s]+$'),
  password_hash        text CHECK (password_hash LIKE '$argon2id$%'),
  password_changed_at  timestamptz,
  created_at           timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX site_users_email_idx ON accounts.site_users (lower(email));
COMMENT ON TABLE accounts.site_users IS
  'Who may sign in to the account site, one per client: email (unique, any case) and an argon2id password hash.';

-- A session is the SHA-256 of the random token in the browser's cookie: a stolen table opens no session. It ends on
-- sign-out, on a password change (all of the user's), after an idle hour or 12 hours at most (sql/site/sessions.sql).
CREATE TABLE accounts.site_sessions (
  token_hash    bytea PRIMARY KEY CHECK (length(token_hash) = 32),
  user_id       uuid NOT NULL REFERENCES accounts.site_users(id) ON DELETE CASCADE,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_seen_at  timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL
);
CREATE INDEX site_sessions_user_idx ON accounts.site_sessions (user_id);
CREATE INDEX site_sessions_expires_idx ON accounts.site_sessions (expires_at);
COMMENT ON TABLE accounts.site_sessions IS
  'Account-site sessions by SHA-256 of the cookie token; ended by sign-out, a password change, idle or absolute expiry.';

-- Emailed single-use links, by SHA-256 of the token in the link: finishing a sign-up (the pending account's name,
-- email and password hash wait here), resetting a password, or setting one on an operator's invitation.
CREATE TABLE accounts.site_tokens (
  token_hash     bytea PRIMARY KEY CHECK (length(token_hash) = 32),
  purpose        text NOT NULL CHECK (purpose IN ('signup', 'reset', 'invite')),
  user_id        uuid REFERENCES accounts.site_users(id) ON DELETE CASCADE,
  email          text NOT NULL,
  name           text,
  password_hash  text CHECK (password_hash LIKE '$argon2id$%'),
  created_at     timestamptz NOT NULL DEFAULT now(),
  expires_at     timestamptz NOT NULL,
  CHECK ((purpose = 'signup') = (user_id IS NULL)),
  CHECK ((purpose = 'signup') = (password_hash IS NOT NULL AND name IS NOT NULL))
);
CREATE INDEX site_tokens_user_idx ON accounts.site_tokens (user_id);
CREATE INDEX site_tokens_expires_idx ON accounts.site_tokens (expires_at);
COMMENT ON TABLE accounts.site_tokens IS
  'Single-use emailed links (sign-up, password reset, invitation) by SHA-256 of the token; deleted when used or expired.';

-- Down Migration
-- schema site's functions are the repeatable objects over these tables (one returns a site_users row): they go first
DROP SCHEMA IF EXISTS site CASCADE;
DROP TABLE accounts.site_tokens;
DROP TABLE accounts.site_sessions;
DROP TABLE accounts.site_users;
-- api_site is cluster-wide and may serve other databases of the cluster: it is kept.
