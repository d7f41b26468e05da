// The email digest through a real SMTP server started here: the count, the first 20 matches, a link to the rest, the
// RFC 8058 headers; daily means once a day (the clock is passed in); two senders at once send it once; a record is
// in one digest only; the one-click unsubscribe (a POST without session or CSRF token) stops it.
import t from 'tap';
import { buildTestApp } from '../helpers/app.ts';
import { smtpSink } from '../helpers/smtp.ts';
import { createSql } from '../../src/plugins/db.ts';
import { sendDigests } from '../../src/saved-searches/digest.ts';
import { FAST, api, webhooksUrl } from '../webhooks/helpers.ts';
import { importList } from './helpers.ts';

const ctx = await buildTestApp(t, FAST);
const { db } = ctx;
const { received, mailer } = await smtpSink(t, 'alerts@example.com');
const sql = createSql(webhooksUrl(db), 2); // as the site's process runs it: api_webhooks
t.teardown(() => sql.end({ timeout: 5 }));
const SITE = 'https://example.test';

/** Headers unfolded and the quoted-printable body undone, enough to read both. */
function parse(raw: string) {
  const [head, ...rest] = raw.split('\r\n\r\n');
  const headers = new Map<string, string>();
  for (const line of head!.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const i = line.indexOf(':');
    headers.set(line.slice(0, i).toLowerCase(), line.slice(i + 1).trim());
  }
  const body = rest
    .join('\r\n\r\n')
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  return { headers, body };
}

const lead = await ctx.newClient('lead_feed');
const res = await api(ctx, lead.key).post('/v1/saved-searches', {
  name: 'Liberty list',
  resource: 'tax_delinquencies',
  params: { county: 'liberty' },
  deliver: { email: 'daily' },
});
const search = res.json().data as { id: string };
const t0 = new Date(Date.now() + 60_000);
const day = 24 * 3600 * 1000;

t.test('a digest: the count, the first 20, a link to the rest, RFC 8058 headers', async (t) => {
  await importList(
    db,
    'liberty',
    2031,
    Array.from({ length: 25 }, (_, i) => ({ parcel: `D-${i}`, due: 1000 + i })),
  );
  t.equal(await sendDigests(sql, mailer, SITE, t0), 1);
  t.equal(received.length, 1);
  const { headers, body } = parse(received[0]!.raw);
  t.same(received[0]!.to, ['test@example.com'], "to the client's address");
  t.equal(headers.get('subject'), '25 new matches: Liberty list');
  const lines = body.split(/\r?\n/).filter((l) => l.startsWith('- liberty '));
  t.equal(lines.length, 20, 'the first 20 records');
  t.match(lines[0], /^- liberty D-0 \(2031\): delinquent, \$1,000\.00 due/);
  t.match(body, `These are the first 20. All 25: ${SITE}/account/saved-searches/${search.id}`);
  const unsubscribe = /^<(https:\/\/example\.test\/account\/unsubscribe\/[A-Za-z0-9_-]{32})>$/.exec(
    headers.get('list-unsubscribe') ?? '',
  );
  t.ok(unsubscribe, 'List-Unsubscribe: one https URI');
  t.equal(headers.get('list-unsubscribe-post'), 'List-Unsubscribe=One-Click');
  t.equal(await sendDigests(sql, mailer, SITE, t0), 0, 'nothing new: no second message');
});

t.test('daily: the next one a day later, with only the new records; two senders send it once', async (t) => {
  await importList(
    db,
    'liberty',
    2032,
    Array.from({ length: 3 }, (_, i) => ({ parcel: `E-${i}`, due: 50 + i })),
  );
  t.equal(await sendDigests(sql, mailer, SITE, new Date(t0.getTime() + day / 2)), 0, 'not yet due');
  const later = new Date(t0.getTime() + day);
  const [a, b] = await Promise.all([sendDigests(sql, mailer, SITE, later), sendDigests(sql, mailer, SITE, later)]);
  t.equal(a + b, 1, 'two senders at once: one message');
  t.equal(received.length, 2);
  const { headers, body } = parse(received[1]!.raw);
  t.match(headers.get('subject'), '3 new matches');
  t.same(
    body
      .split(/\r?\n/)
      .filter((l) => l.startsWith('- liberty '))
      .map((l) => l.split(' ')[2]),
    ['E-0', 'E-1', 'E-2'],
    'only the records since the last digest',
  );
});

t.test('one-click unsubscribe: a POST without session or CSRF token stops the digest', async (t) => {
  const link = /^<([^>]+)>$/.exec(parse(received[0]!.raw).headers.get('list-unsubscribe')!)![1]!;
  const path = new URL(link).pathname;
  const page = await ctx.app.inject({ url: path });
  t.equal(page.statusCode, 200);
  t.match(page.body, /Unsubscribe/);
  const post = await ctx.app.inject({
    method: 'POST',
    url: path,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'List-Unsubscribe=One-Click',
  });
  t.equal(post.statusCode, 200);
  t.match(post.body, /Unsubscribed/);
  const now = (await api(ctx, lead.key).get(`/v1/saved-searches/${search.id}`)).json().data;
  t.equal(now.deliver.email, null, 'the search has no digest any more');
  await importList(db, 'liberty', 2033, [{ parcel: 'F-1', due: 10 }]);
  t.equal(await sendDigests(sql, mailer, SITE, new Date(t0.getTime() + 5 * day)), 0, 'no more digests');
  const bogus = await ctx.app.inject({ method: 'POST', url: '/account/unsubscribe/' + 'x'.repeat(32), payload: '' });
  t.equal(bogus.statusCode, 404, 'an unknown token: 404');
});
