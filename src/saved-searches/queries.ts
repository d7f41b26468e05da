// Saved searches: the only TypeScript that calls sql/saved's management and read functions (as api_webhooks, the
// webhooks' management role). Every call is scoped to the calling client.
import type { Sql } from '../plugins/db.ts';
import type { Resource } from './params.ts';

export interface SavedSearchRow {
  id: string;
  name: string;
  resource: Resource;
  params: Record<string, string>;
  deliver: { webhook_endpoints: string[]; email: 'daily' | 'weekly' | null };
  match_count: number;
  last_matched_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface MatchRow {
  cursor: string;
  matched_at: string;
  record: Record<string, unknown>;
}

/** ss_<32 hex> or ep_<32 hex> as the uuid it stands for. */
export const uuidOf = (publicId: string) => {
  const h = publicId.slice(3);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

export async function createSavedSearch(
  sql: Sql,
  a: {
    clientId: string;
    id: string;
    name: string;
    resource: Resource;
    params: object;
    args: object;
    endpointIds: string[];
    email: string | null;
    token: string;
  },
): Promise<SavedSearchRow> {
  const [r] = await sql<{ s: SavedSearchRow }[]>`
    SELECT saved.create_search(p_client_id => ${a.clientId}::uuid, p_id => ${a.id}::uuid, p_name => ${a.name},
             p_resource => ${a.resource}, p_params => ${sql.json(a.params as never)}::jsonb,
             p_args => ${sql.json(a.args as never)}::jsonb, p_endpoint_ids => ${a.endpointIds}::uuid[],
             p_email => ${a.email}, p_token => ${a.token}) AS s`;
  return r!.s;
}

export async function listSavedSearches(sql: Sql, clientId: string): Promise<SavedSearchRow[]> {
  const [r] = await sql<{ s: SavedSearchRow[] }[]>`SELECT saved.list_searches(p_client_id => ${clientId}::uuid) AS s`;
  return r!.s;
}

export async function getSavedSearch(sql: Sql, clientId: string, id: string): Promise<SavedSearchRow | null> {
  const [r] = await sql<{ s: SavedSearchRow | null }[]>`
    SELECT saved.get_search(p_client_id => ${clientId}::uuid, p_id => ${id}::uuid) AS s`;
  return r!.s;
}

export async function updateSavedSearch(
  sql: Sql,
  clientId: string,
  id: string,
  p: { name?: string; params?: object; args?: object; endpointIds?: string[]; email?: string | null },
): Promise<SavedSearchRow | null> {
  const [r] = await sql<{ s: SavedSearchRow | null }[]>`
    SELECT saved.update_search(p_client_id => ${clientId}::uuid, p_id => ${id}::uuid, p_name => ${p.name ?? null},
             p_params => ${p.params ? sql.json(p.params as never) : null}::jsonb,
             p_args => ${p.args ? sql.json(p.args as never) : null}::jsonb,
             p_endpoint_ids => ${p.endpointIds ?? null}::uuid[], p_email => ${p.email ?? null},
             p_email_given => ${p.email !== undefined}) AS s`;
  return r!.s;
}

export async function deleteSavedSearch(sql: Sql, clientId: string, id: string): Promise<boolean> {
  const [r] = await sql<{ ok: boolean }[]>`
    SELECT saved.delete_search(p_client_id => ${clientId}::uuid, p_id => ${id}::uuid) AS ok`;
  return r!.ok;
}

/** A page of matches after the cursor (a match id as decimal text; '0' for the first). */
export async function listMatches(
  sql: Sql,
  clientId: string,
  id: string,
  since: string,
  limit: number,
): Promise<MatchRow[]> {
  return sql<MatchRow[]>`
    SELECT cursor, matched_at, record FROM saved.list_matches(p_client_id => ${clientId}::uuid, p_id => ${id}::uuid,
             p_since => ${since}::bigint, p_limit => ${limit}::int)`;
}

/** One-click unsubscribe: the search's name, or null for an unknown token. */
export async function unsubscribe(sql: Sql, token: string): Promise<string | null> {
  const [r] = await sql<{ name: string | null }[]>`SELECT saved.unsubscribe(p_token => ${token}) AS name`;
  return r!.name;
}

/** The account site's list: each search's latest matches, newest first. */
export async function recentMatches(
  sql: Sql,
  clientId: string,
  perSearch: number,
): Promise<(MatchRow & { search_id: string })[]> {
  return sql<(MatchRow & { search_id: string })[]>`
    SELECT search_id, cursor, matched_at, record
      FROM saved.recent_matches(p_client_id => ${clientId}::uuid, p_per_search => ${perSearch}::int)`;
}
