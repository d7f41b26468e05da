// Webhooks: the only TypeScript that calls the management functions of sql/webhooks/endpoints.sql (as api_webhooks).
// Ids arrive as uuids (endpoints) and decimal strings (deliveries); every call is scoped to the calling client.
import type { Sql } from '../plugins/db.ts';
import type { WebhookDelivery, WebhookEndpoint } from '../schemas/webhooks.ts';

export type EndpointRow = Omit<WebhookEndpoint, 'beta'>;

export async function createEndpoint(
  sql: Sql,
  a: {
    clientId: string;
    id: string;
    url: string;
    events: string[];
    counties: string[] | null;
    description: string | null;
    valueChangeThreshold: number | null;
    secretBox: Buffer;
    maxEndpoints: number;
  },
): Promise<EndpointRow> {
  const [r] = await sql<{ e: EndpointRow }[]>`
    SELECT webhooks.create_endpoint(p_client_id => ${a.clientId}::uuid, p_id => ${a.id}::uuid, p_url => ${a.url},
             p_events => ${a.events}::text[], p_counties => ${a.counties}::text[], p_description => ${a.description},
             p_secret_box => ${a.secretBox}, p_max_endpoints => ${a.maxEndpoints},
             p_value_change_threshold => ${a.valueChangeThreshold}::numeric) AS e`;
  return r!.e;
}

export async function listEndpoints(sql: Sql, clientId: string): Promise<EndpointRow[]> {
  const [r] = await sql<{ e: EndpointRow[] }[]>`SELECT webhooks.list_endpoints(p_client_id => ${clientId}::uuid) AS e`;
  return r!.e;
}

export async function getEndpoint(sql: Sql, clientId: string, id: string): Promise<EndpointRow | null> {
  const [r] = await sql<{ e: EndpointRow | null }[]>`
    SELECT webhooks.get_endpoint(p_client_id => ${clientId}::uuid, p_id => ${id}::uuid) AS e`;
  return r!.e;
}

export async function updateEndpoint(
  sql: Sql,
  clientId: string,
  id: string,
  p: {
    url?: string;
    events?: string[];
    counties?: string[] | null;
    description?: string | null;
    status?: 'enabled' | 'disabled';
    value_change_threshold?: number;
  },
): Promise<EndpointRow | null> {
  const [r] = await sql<{ e: EndpointRow | null }[]>`
    SELECT webhooks.update_endpoint(p_client_id => ${clientId}::uuid, p_id => ${id}::uuid, p_url => ${p.url ?? null},
             p_events => ${p.events ?? null}::text[], p_counties => ${p.counties ?? null}::text[],
             p_counties_given => ${p.counties !== undefined}, p_description => ${p.description ?? null},
             p_description_given => ${p.description !== undefined}, p_status => ${p.status ?? null},
             p_value_change_threshold => ${p.value_change_threshold ?? null}::numeric) AS e`;
  return r!.e;
}

export async function deleteEndpoint(sql: Sql, clientId: string, id: string): Promise<boolean> {
  const [r] = await sql<{ ok: boolean }[]>`
    SELECT webhooks.delete_endpoint(p_client_id => ${clientId}::uuid, p_id => ${id}::uuid) AS ok`;
  return r!.ok;
}

export async function rotateSecret(
  sql: Sql,
  clientId: string,
  id: string,
  secretBox: Buffer,
  overlapMs: number,
): Promise<EndpointRow | null> {
  const [r] = await sql<{ e: EndpointRow | null }[]>`
    SELECT webhooks.rotate_secret(p_client_id => ${clientId}::uuid, p_id => ${id}::uuid, p_secret_box => ${secretBox},
             p_overlap_ms => ${overlapMs}) AS e`;
  return r!.e;
}

export async function sendTest(
  sql: Sql,
  clientId: string,
  id: string,
): Promise<{ delivery_id: string; event_id: string } | null> {
  const [r] = await sql<{ delivery_id: string | null; event_id: string | null }[]>`
    SELECT delivery_id, event_id FROM webhooks.send_test(p_client_id => ${clientId}::uuid, p_id => ${id}::uuid)`;
  return r?.delivery_id ? { delivery_id: r.delivery_id, event_id: r.event_id! } : null;
}

export async function listDeliveries(
  sql: Sql,
  clientId: string,
  id: string,
  q: { status?: string; limit: number; offset: number },
): Promise<{ total: number; items: WebhookDelivery[] } | null> {
  const [r] = await sql<{ total: number | null; items: WebhookDelivery[] | null }[]>`
    SELECT total, items FROM webhooks.list_deliveries(p_client_id => ${clientId}::uuid, p_id => ${id}::uuid,
             p_status => ${q.status ?? null}, p_limit => ${q.limit}, p_offset => ${q.offset})`;
  return r?.total === null || r?.total === undefined ? null : { total: r.total, items: r.items ?? [] };
}

export async function retryDelivery(
  sql: Sql,
  clientId: string,
  id: string,
  deliveryId: string,
): Promise<WebhookDelivery | null> {
  const [r] = await sql<{ d: WebhookDelivery | null }[]>`
    SELECT webhooks.retry_delivery(p_client_id => ${clientId}::uuid, p_id => ${id}::uuid,
             p_delivery_id => ${deliveryId}::bigint) AS d`;
  return r!.d;
}

/**
 * Queues the endpoint's drain job now, so a test or a retry goes out without waiting for the sweep. False when the
 * job queue is not installed yet (no worker ever started); the first worker's sweep then finds the delivery.
 */
export async function wakeEndpoint(sql: Sql, id: string): Promise<boolean> {
  try {
    await sql`SELECT webhooks_jobs.add_job('webhooks_drain', json_build_object('endpoint', ${id}::text),
                                           job_key => ${`webhooks_drain:${id}`})`;
    return true;
  } catch {
    return false;
  }
}
