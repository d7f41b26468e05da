-- Up Migration
-- Every API process caches valid keys. A change that must reach them at once (a key revoked or deleted, a client
-- suspended, its plan, limits or credits changed: whatever bumps credit_version) sends NOTIFY accounts_changed with
-- the client's id, delivered at commit to every process listening. Changes made with plain SQL reach them too,
-- and so do changes made while Redis is unreachable (the service's other signal: deleting the client's balance).
CREATE FUNCTION accounts.notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'clients' THEN
    PERFORM pg_notify('accounts_changed', OLD.id::text);
  ELSE
    PERFORM pg_notify('accounts_changed', OLD.client_id::text);
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION accounts.notify_change() IS
  'Trigger: NOTIFY accounts_changed, payload the client id, so that API processes drop the cached keys of a client '
  'whose keys or credits changed. Example: LISTEN accounts_changed; then revoke a key and see the notification.';

CREATE TRIGGER clients_notify_change AFTER UPDATE ON accounts.clients
  FOR EACH ROW WHEN (NEW.credit_version IS DISTINCT FROM OLD.credit_version) EXECUTE FUNCTION accounts.notify_change();
CREATE TRIGGER api_keys_notify_change AFTER UPDATE OF status, revoked_at, client_id, mode, key_hash ON accounts.api_keys
  FOR EACH ROW EXECUTE FUNCTION accounts.notify_change();
CREATE TRIGGER api_keys_notify_delete AFTER DELETE ON accounts.api_keys
  FOR EACH ROW EXECUTE FUNCTION accounts.notify_change();

-- Down Migration
DROP TRIGGER api_keys_notify_delete ON accounts.api_keys;
DROP TRIGGER api_keys_notify_change ON accounts.api_keys;
DROP TRIGGER clients_notify_change ON accounts.clients;
DROP FUNCTION accounts.notify_change();
