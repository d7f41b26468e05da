// parcel.value_changed: a new roll year that moves a parcel's just value by more than an endpoint's threshold
// (default 10%, either way) gives that endpoint one event; an older year, the same year again, or a smaller move
// gives none. Endpoints set the threshold through POST and PATCH /v1/webhooks; bad values are a 400.
import t from 'tap';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildTestApp } from '../helpers/app.ts';
import { FAST, api, receiver } from '../webhooks/helpers.ts';
import { importNal } from '../../src/importers/nal.ts';
import { parseCsv } from '../../src/importers/csv.ts';
import { fixture, rejectsPath } from '../importers/fixture.ts';

const ctx = await buildTestApp(t, FAST);
const sql = ctx.db.sql;
const hooks = api(ctx);
const hook = await receiver(t);
const scratch = mkdtempSync(join(tmpdir(), 'history-webhooks-'));
const ORIGINAL = readFileSync(fixture('nal/NAL49F202501.csv'), 'latin1');

/** The Liberty fixture roll as `year`, with the just value of some parcels multiplied by a factor. */
function roll(year: number, factors: Record<string, number>): string {
  const lines = ORIGINAL.split('\r\n');
  const header = parseCsv(lines[0]!.replace(/^\u00EF\u00BB\u00BF/, ''))!;
  const jv = header.indexOf('JV');
  const out = lines.map((line, i) => {
    if (i === 0) return line;
    const moved = line.replace(/^(49,[^,]*,[^,]*,)2025,/, `$1${year},`);
    const f = parseCsv(moved);
    const factor = f && factors[f[1]!];
    if (!f || !factor) return moved;
    f[jv] = String(Math.round(Number(f[jv]) * factor));
    return f.map((x) => (/[",\r\n]/.test(x) ? `"${x.replace(/"/g, '""')}"` : x)).join(',');
  });
  const file = join(scratch, `NAL49-${year}-${Object.keys(factors).length}.csv`);
  writeFileSync(file, out.join('\r\n'), 'latin1');
  return file;
}
const load = (file: string) =>
  importNal({ file, databaseUrl: ctx.db.ownerUrl, rejects: rejectsPath('wh'), quiet: true, maxDeleteRate: 1 });
const fanOut = async () => {
  for (;;) {
    const [r] = await sql<{ took: boolean }[]>`SELECT took FROM webhooks.fan_out(1000)`;
    if (!r!.took) return;
  }
};
const delivered = async (endpointId: string) =>
  sql<{ parcel_id: string; pct: string }[]>`
    SELECT ev.data->>'parcel_id' AS parcel_id, webhooks.value_change_pct(ev.data, ev.previous)::text AS pct
      FROM webhooks.deliveries d JOIN webhooks.events ev ON ev.id = d.event_id
     WHERE d.endpoint_id = ${endpointId.slice(3).replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-')}::uuid
       AND ev.type = 'parcel.value_changed'
     ORDER BY ev.id`;

const a = await hooks.create({ url: hook.url, events: ['parcel.value_changed'], counties: ['liberty'] });
const b = await hooks.create({ url: hook.url, events: ['parcel.value_changed'], value_change_threshold: 30 });

t.test('POST and PATCH set the threshold; the default is 10; bad values are a 400', async (t) => {
  t.equal(a.value_change_threshold, 10);
  t.equal(b.value_change_threshold, 30);
  const patched = await hooks.patch(`/v1/webhooks/${b.id}`, { value_change_threshold: 25 });
  t.equal(patched.json().data.value_change_threshold, 25);
  const kept = await hooks.patch(`/v1/webhooks/${b.id}`, { description: 'big moves' });
  t.equal(kept.json().data.value_change_threshold, 25, 'left out: unchanged');
  for (const bad of [-1, 1001, 'ten']) {
    const res = await hooks.post('/v1/webhooks', {
      url: hook.url,
      events: ['parcel.value_changed'],
      value_change_threshold: bad,
    });
    t.equal(res.statusCode, 400, `create with ${bad}`);
    t.match(res.json().error.message, /value_change_threshold/);
  }
  t.equal((await hooks.patch(`/v1/webhooks/${a.id}`, { value_change_threshold: 5000 })).statusCode, 400);
});

t.test('a new roll year: one event per endpoint for each move past its threshold', async (t) => {
  const [one, two, three, four] = ORIGINAL.split('\r\n')
    .slice(20, 24)
    .map((l) => parseCsv(l)![1]!);
  await load(roll(2025, {})); // the fixture's roll as it is
  await fanOut();
  t.same(await sql`SELECT 1 FROM webhooks.events WHERE type = 'parcel.value_changed'`, [], 'same year: no value event');

  // 2026: +5% (nobody), +12% and -20% (past 10), +30% (past 10 and 25)
  await load(roll(2026, { [one!]: 1.05, [two!]: 1.12, [three!]: 0.8, [four!]: 1.3 }));
  await fanOut();
  const [parcel] = await sql<{ id: number; just_value: string }[]>`
    SELECT id::int, just_value::text FROM core.parcels WHERE county_id = 39 AND parcel_id = ${four!}`;
  const [event] = await sql<{ data: { id: number; just_value: number }; previous: unknown }[]>`
    SELECT data, previous FROM webhooks.events WHERE type = 'parcel.value_changed' AND data->>'parcel_id' = ${four!}`;
  t.equal(event!.data.id, parcel!.id);
  t.equal(event!.data.just_value, Number(parcel!.just_value), 'data is the parcel as it is now');
  t.same(Object.keys(event!.previous as object), ['roll_year', 'just_value']);
  t.equal((event!.previous as { roll_year: number }).roll_year, 2025);

  const forA = await delivered(a.id);
  t.same(
    forA.map((d) => d.parcel_id),
    [two, three, four],
    'default 10%: the 12%, -20% and 30% moves, not 5%',
  );
  t.ok(forA.every((d) => Math.abs(Number(d.pct)) > 10));
  t.same(
    (await delivered(b.id)).map((d) => d.parcel_id),
    [four],
    'threshold 25: the 30% move only',
  );

  // an older year again moves no current parcel: no event
  const before = (await sql`SELECT count(*)::int AS n FROM webhooks.events WHERE type = 'parcel.value_changed'`)[0];
  await load(roll(2024, { [one!]: 0.5 }));
  await fanOut();
  t.same(
    (await sql`SELECT count(*)::int AS n FROM webhooks.events WHERE type = 'parcel.value_changed'`)[0],
    before,
    'an older roll year sends nothing',
  );
});
