// saved_search.matched over the webhooks' own delivery: the workers match an import after its commit, then send at
// most 100 records an event, signed, to the endpoints the search names only; the records over all events equal the
// load's matches, each once, with two worker processes matching and draining at once and with a worker killed mid-delivery (the receiver dedupes on webhook-id, as documented). The
// pull cursor under concurrent imports never skips or repeats a match.
import t from 'tap';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Webhook } from 'standardwebhooks';
import { buildTestApp } from '../helpers/app.ts';
import { TEST_KEY_SECRET } from '../helpers/accounts.ts';
import { spawnChild } from '../helpers/processes.ts';
import { FAST, api, receiver, startWorker, waitFor } from '../webhooks/helpers.ts';
import { importList } from './helpers.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const ctx = await buildTestApp(t, FAST);
const { db } = ctx;
const sql = db.sql;
const lead = await ctx.newClient('lead_feed');
const m = api(ctx, lead.key);

/** `npm run worker` as a child process, stopped when the test ends (helpers/processes.ts). */
const workerProcess = (t: Parameters<typeof spawnChild>[0]): ChildProcess =>
  spawnChild(t, process.execPath, ['--import', 'tsx', 'src/webhooks/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...FAST,
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      API_DATABASE_URL: db.apiUrl,
      API_KEY_SECRET: TEST_KEY_SECRET,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });

interface MatchedEvent {
  id: string;
  type: string;
  data: { saved_search_id: string; matches: { cursor: string; record: { id: string } }[] };
}

t.test('two worker processes: every match once, at most 100 an event, only to the named endpoint', async (t) => {
  const r = await receiver(t);
  const other = await receiver(t);
  const ep = await m.create({ url: r.url, events: ['county.data_refreshed'], counties: ['broward'] });
  await m.create({ url: other.url, events: ['tax_delinquency.created'], counties: ['broward'] });
  const s = (
    await m.post('/v1/saved-searches', {
      name: 'gulf',
      resource: 'tax_delinquencies',
      params: { county: 'gulf' },
      deliver: { webhook_endpoints: [ep.id] },
    })
  ).json().data;
  workerProcess(t);
  workerProcess(t);
  const load = await importList(
    db,
    'gulf',
    2031,
    Array.from({ length: 250 }, (_, i) => ({ parcel: `W-${i}`, due: i })),
    { match: false }, // the workers match it after its commit
  );
  const matched = () => sql<{ id: string }[]>`
    SELECT record_id::text AS id FROM saved.matches WHERE load_id = ${load.loadId} ORDER BY id`;
  await waitFor('the workers to match the import', async () => (await matched()).length > 0);
  const expected = (await matched()).map((x) => x.id);
  t.equal(expected.length, 250);
  t.same(await sql`SELECT load_id FROM saved.queued_loads`, [], 'nothing left queued');
  await waitFor('three events', () => r.requests.length >= 3);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const events = r.events() as unknown as MatchedEvent[];
  t.equal(events.length, 3, '250 records: three events');
  for (const q of r.requests) new Webhook(ep.secret).verify(q.body, q.headers as Record<string, string>);
  t.same(
    events.map((e) => e.data.matches.length),
    [100, 100, 50],
    'at most 100 records an event, in order',
  );
  t.ok(events.every((e) => e.type === 'saved_search.matched' && e.data.saved_search_id === s.id));
  const got = events.flatMap((e) => e.data.matches.map((x) => x.record.id));
  t.same([...got].sort(), [...expected].sort(), 'the records over all events are the matches, each once');
  // the body as documented (docs/saved-searches.md#webhooks): the search, then each match's cursor and record, the
  // same record the pull API gives for that cursor
  const body = JSON.parse(r.requests[0]!.body) as Record<string, unknown>;
  t.same(Object.keys(body), ['id', 'type', 'created_at', 'data'], "the event's fields");
  t.same(Object.keys(events[0]!.data), ['saved_search_id', 'name', 'resource', 'matches'], "the data's fields");
  t.same(Object.keys(events[0]!.data.matches[0]!), ['cursor', 'record'], "a match's fields");
  const res = await m.get(`/v1/saved-searches/${s.id}/matches?limit=300`);
  t.equal(res.statusCode, 200, res.body);
  t.same(
    events.flatMap((e) => e.data.matches),
    (res.json().data ?? []).map((x: { cursor: string; record: unknown }) => ({ cursor: x.cursor, record: x.record })),
    'the events carry the cursors and records the pull API pages',
  );
  t.equal(other.requests.length, 0, 'an endpoint the search does not name gets nothing');
  await r.close();
});

t.test('a worker killed mid-delivery: sent again with the same webhook-id, nothing lost', async (t) => {
  let first = true;
  const r = await receiver(t, () => {
    if (first) {
      first = false;
      return { hang: true };
    }
    return {};
  });
  const ep = await m.create({ url: r.url, events: ['county.data_refreshed'], counties: ['broward'] });
  await m.post('/v1/saved-searches', {
    name: 'liberty',
    resource: 'tax_delinquencies',
    params: { county: 'liberty' },
    deliver: { webhook_endpoints: [ep.id] },
  });
  const a = workerProcess(t);
  await importList(
    db,
    'liberty',
    2031,
    Array.from({ length: 120 }, (_, i) => ({ parcel: `K-${i}`, due: i })),
    { match: false },
  );
  await waitFor('the first attempt, held open', () => r.requests.length >= 1);
  a.kill('SIGKILL');
  await once(a, 'exit');
  await startWorker(t, db);
  await waitFor('both events', () => new Set(r.requests.map((q) => q.headers['webhook-id'])).size >= 2);
  const byId = new Map<string, MatchedEvent>();
  for (const e of r.events() as unknown as MatchedEvent[]) byId.set(e.id, e);
  t.ok(r.requests.length >= 3, 'the interrupted event was sent again');
  t.equal(r.requests[1]!.headers['webhook-id'], r.requests[0]!.headers['webhook-id'], 'with the same webhook-id');
  const records = [...byId.values()].flatMap((e) => e.data.matches.map((x) => x.record.id));
  t.equal(records.length, 120, 'deduplicated on webhook-id: every match once');
  t.equal(new Set(records).size, 120);
});

t.test("a matching that fails holds back no import's own events, and stays queued", async (t) => {
  const r = await receiver(t);
  await m.create({ url: r.url, events: ['tax_delinquency.created'], counties: ['holmes'] });
  await m.post('/v1/saved-searches', { name: 'holmes', resource: 'tax_delinquencies', params: { county: 'holmes' } });
  // an import queued before, whose matching fails: a version from before that is no longer a row of the table
  await sql`INSERT INTO saved.queued_loads (load_id) VALUES (-1)`;
  await sql`INSERT INTO saved.queued_keys (load_id, resource, id) VALUES (-1, 'tax_delinquencies', 1)`;
  await sql`INSERT INTO saved.queued_old (load_id, resource, id, record) VALUES (-1, 'tax_delinquencies', 1, '(x)')`;
  t.teardown(async () => {
    await sql`DELETE FROM saved.queued_old WHERE load_id = -1`;
    await sql`DELETE FROM saved.queued_keys WHERE load_id = -1`;
    await sql`DELETE FROM saved.queued_loads WHERE load_id = -1`;
  });
  const errors: string[] = [];
  const log = {
    debug: () => {},
    info: () => {},
    warn: () => {},
    error: (_: object, msg?: string) => errors.push(msg ?? ''),
  };
  await startWorker(t, db, {}, log);
  const load = await importList(
    db,
    'holmes',
    2031,
    Array.from({ length: 3 }, (_, i) => ({ parcel: `H-${i}`, due: 100 + i })),
    { match: false },
  );
  await waitFor("the import's own events", () => r.requests.length >= 3);
  t.equal(r.events().length, 3, 'tax_delinquency.created for each record, sent');
  await waitFor('the matching error in the log', () => errors.length > 0);
  t.match(errors[0], /saved-search matching failed/, 'the failed matching is logged');
  t.same(
    (await sql<{ load_id: string }[]>`SELECT load_id::text FROM saved.queued_loads ORDER BY load_id`).map(
      (x) => x.load_id,
    ),
    ['-1', String(load.loadId)],
    'it stays queued, and the import after it waits its turn',
  );
  await r.close();
});

t.test('the cursor under concurrent imports never skips or repeats a match', async (t) => {
  const s = (
    await m.post('/v1/saved-searches', { name: 'all', resource: 'tax_delinquencies', params: { tax_year: '2040' } })
  ).json().data;
  const seen: string[] = [];
  let cursor = '0';
  let done = false;
  const pager = (async () => {
    for (;;) {
      const finished = done; // read before the page: a page read after both commits sees everything
      const page = (await m.get(`/v1/saved-searches/${s.id}/matches?since=${cursor}&limit=7`)).json();
      for (const x of page.data) seen.push(x.cursor);
      cursor = page.next_cursor;
      if (finished && !page.has_more) return;
    }
  })();
  // A holds its transaction open after its matches while B, in another county, merges and commits
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let inA!: () => void;
  const aMatched = new Promise<void>((resolve) => (inA = resolve));
  const a = importList(
    db,
    'baker',
    2040,
    Array.from({ length: 30 }, (_, i) => ({ parcel: `A-${i}`, due: i })),
    {
      beforeCommit: async () => {
        inA();
        await held;
      },
    },
  );
  await aMatched;
  const b = importList(
    db,
    'bay',
    2040,
    Array.from({ length: 30 }, (_, i) => ({ parcel: `B-${i}`, due: i })),
  );
  await new Promise((resolve) => setTimeout(resolve, 1500)); // B runs, and pages are read, while A is open
  release();
  await Promise.all([a, b]);
  done = true;
  await pager;
  const all = (
    await sql<{ id: string }[]>`SELECT id::text FROM saved.matches WHERE search_id = ${s.id.slice(3)}::uuid ORDER BY id`
  ).map((x) => x.id);
  t.equal(all.length, 60);
  t.same(seen, all, 'the pages saw every match once, in order');
});
