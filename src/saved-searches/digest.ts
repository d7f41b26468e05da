// Email digests of saved searches (docs/saved-searches.md#email-digest): each run claims the searches whose daily or
// weekly digest is due and mails each one its matches since the last digest (the count, the first 20, a link to the
// rest) with an RFC 8058 one-click unsubscribe. A search is claimed, mailed and marked in one transaction: two
// processes never mail the same digest, and a failed send leaves it due for the next run.
import type { Sql } from '../plugins/db.ts';
import type { Mail, Mailer } from '../site/mail.ts';

export const DIGEST_CHECK_MS = 60_000;
/** Digests one run sends at most; the rest wait for the next run. */
const PER_RUN = 200;

interface Due {
  search_id: string;
  public_id: string;
  name: string;
  resource: 'parcels' | 'tax_delinquencies';
  email: string;
  period: 'daily' | 'weekly';
  token: string;
  match_count: number;
  through_match_id: string;
  first_matches: Record<string, unknown>[];
}

/** The unsubscribe address of a search's digest (GET: a page with a button; POST: RFC 8058 one-click). */
export const unsubscribeUrl = (siteUrl: string, token: string) => `${siteUrl}/account/unsubscribe/${token}`;

/** One line of a record: what a list builder scans for. */
function line(resource: Due['resource'], r: Record<string, unknown>): string {
  const v = (x: unknown) => (x === null || x === undefined || x === '' ? '-' : String(x));
  if (resource === 'tax_delinquencies') {
    const due =
      typeof r.total_due === 'number' ? `$${r.total_due.toLocaleString('en-US', { minimumFractionDigits: 2 })}` : '-';
    return `${v(r.county_slug)} ${v(r.county_parcel_id)} (${v(r.tax_year)}): ${v(r.status)}, ${due} due - ${v(r.owner_name)}, ${v(r.site_address_full)}`;
  }
  return `${v(r.county_slug)} ${v(r.parcel_id)}: ${v(r.owner_name)}, ${v(r.site_address_full)} - just value ${v(r.just_value)}`;
}

/** The digest message of a due search. */
export function digestMail(d: Due, siteUrl: string): Mail {
  const shown = d.first_matches.length;
  const unsubscribe = unsubscribeUrl(siteUrl, d.token);
  const rest = `${siteUrl}/account/saved-searches/${d.public_id}`;
  return {
    to: d.email,
    subject: `${d.match_count.toLocaleString('en-US')} new match${d.match_count === 1 ? '' : 'es'}: ${d.name}`,
    text: [
      `Your saved search "${d.name}" has ${d.match_count.toLocaleString('en-US')} new match${d.match_count === 1 ? '' : 'es'} since the last ${d.period} digest.`,
      '',
      ...d.first_matches.map((r) => `- ${line(d.resource, r)}`),
      '',
      d.match_count > shown ? `These are the first ${shown}. All ${d.match_count}: ${rest}` : `On the site: ${rest}`,
      '',
      `Stop this digest: ${unsubscribe}`,
    ].join('\n'),
    headers: {
      'List-Unsubscribe': `<${unsubscribe}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    },
  };
}

/** Sends the digests due at `now`; returns how many were sent. */
export async function sendDigests(sql: Sql, mailer: Mailer, siteUrl: string, now = new Date()): Promise<number> {
  let sent = 0;
  while (sent < PER_RUN) {
    const done = await sql.begin(async (tx) => {
      const [d] = await tx<Due[]>`SELECT * FROM saved.claim_digest(p_now => ${now})`;
      if (!d) return false;
      await mailer.send(digestMail(d, siteUrl));
      await tx`SELECT saved.mark_digest_sent(p_search_id => ${d.search_id}::uuid,
                 p_through_match_id => ${d.through_match_id}::bigint, p_now => ${now})`;
      return true;
    });
    if (!done) break;
    sent++;
  }
  return sent;
}
