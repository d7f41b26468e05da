-- What api_webhooks (the management API's writes and the delivery workers, WEBHOOKS_DATABASE_URL) may do: execute
-- the SECURITY DEFINER functions of sql/webhooks that serve them; no table, and nothing of core, accounts or meter.
-- api_reader gets nothing here: the request path never touches webhooks.
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA webhooks FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA webhooks FROM PUBLIC;
GRANT USAGE ON SCHEMA webhooks TO api_webhooks;
GRANT EXECUTE ON FUNCTION
  webhooks.fan_out(integer),
  webhooks.acquire_endpoint(uuid, text, integer),
  webhooks.renew_lease(uuid, text, integer),
  webhooks.claim_deliveries(uuid, text, integer, integer, integer),
  webhooks.record_attempts(uuid, jsonb, bigint[], boolean, timestamptz, bigint),
  webhooks.release_endpoint(uuid, text, timestamptz),
  webhooks.sweep(bigint, integer),
  webhooks.create_endpoint(uuid, uuid, text, text[], text[], text, bytea, integer, numeric),
  webhooks.list_endpoints(uuid),
  webhooks.get_endpoint(uuid, uuid),
  webhooks.update_endpoint(uuid, uuid, text, text[], text[], boolean, text, boolean, text, numeric),
  webhooks.delete_endpoint(uuid, uuid),
  webhooks.rotate_secret(uuid, uuid, bytea, bigint),
  webhooks.send_test(uuid, uuid),
  webhooks.list_deliveries(uuid, uuid, text, integer, integer),
  webhooks.retry_delivery(uuid, uuid, bigint),
  webhooks.event_types()
TO api_webhooks;
