// Matching through real imports against the exhaustive definition, for parcel and delinquency searches together
// covering every filter the two search endpoints accept: the real NAL and delinquency fixture files (and changed
// copies of them) go through the import command operators run; after each load, the pairs it recorded must equal,
// for every saved search, the records the load changed that its GET endpoint returns after the load and did not
// return before, less the pairs recorded by an earlier load (a record that leaves and comes back is not new).
import t, { type Test } from 'tap';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCommand } from '../../src/importers/command.ts';
import { parseCsv } from '../../src/importers/csv.ts';
import { runImport } from '../../src/importers/pipeline.ts';
import { buildTestApp } from '../helpers/app.ts';
import { fixture } from '../importers/fixture.ts';
import { FAST, api } from '../webhooks/helpers.ts';
import { matchQueued, pairsOfLoad } from './helpers.ts';

const ctx = await buildTestApp(t, FAST);
const { db } = ctx;
const sql = db.sql;
const owner = await ctx.newClient('lead_feed');
const reader = await ctx.newClient('enterprise'); // runs the endpoints for the exhaustive check
const scratch = mkdtempSync(join(tmpdir(), 'saved-exhaustive-'));

type Resource = 'parcels' | 'tax_delinquencies';
const ENDPOINT: Record<Resource, string> = {
  parcels: '/v1/parcels/search',
  tax_delinquencies: '/v1/tax-delinquencies/search',
};

// a point inside a Liberty parcel that has a polygon, for near, bbox and point
const [spot] = await sql<{ lat: number; lng: number }[]>`
  SELECT ST_Y(centroid) AS lat, ST_X(centroid) AS lng FROM core.parcels
   WHERE county_id = (SELECT id FROM core.counties WHERE slug = 'liberty') AND geom IS NOT NULL ORDER BY id LIMIT 1`;
const near = `${spot!.lat},${spot!.lng}`;
const box = [spot!.lng - 0.05, spot!.lat - 0.05, spot!.lng + 0.05, spot!.lat + 0.05].map((x) => x.toFixed(5)).join(',');

// every filter of each endpoint at least once, alone where a change can move a record in or out, else with one
const SEARCHES: [Resource, Record<string, string>][] = [
  ['parcels', { county: 'liberty' }],
  ['parcels', { query: 'johnson' }],
  ['parcels', { county: 'liberty', use_code: '0101,0200' }],
  ['parcels', { dor_use_code: '01,02' }],
  ['parcels', { city: 'bristol', just_value_min: '60000' }],
  ['parcels', { zip: '32321', assessed_max: '40000' }],
  ['parcels', { just_value_min: '100000' }],
  ['parcels', { county: 'liberty', just_value_max: '60000' }],
  ['parcels', { county: 'liberty,gulf', just_value_min: '40000', just_value_max: '200000' }],
  ['parcels', { assessed_min: '50000' }],
  ['parcels', { sale_after: '2025-01-01' }],
  ['parcels', { county: 'liberty', sale_before: '2015-01-01' }],
  ['parcels', { sale_price_min: '200000' }],
  ['parcels', { county: 'liberty', sale_price_max: '50000' }],
  ['parcels', { near, radius_m: '20000', just_value_min: '80000' }],
  ['parcels', { bbox: box, dor_use_code: '01' }],
  ['parcels', { point: `${spot!.lng},${spot!.lat}`, just_value_max: '100000' }],
  ['parcels', { owner_changed_since: '2025' }],
  ['parcels', { just_value_change_min: '10' }],
  ['parcels', { county: 'liberty', just_value_change_max: '-10' }],
  ['parcels', { county: 'alachua' }],
  ['tax_delinquencies', { county: 'miami-dade' }],
  ['tax_delinquencies', { tax_year: '2024', min_due: '2500' }],
  ['tax_delinquencies', { status: 'delinquent', min_due: '3000' }],
  ['tax_delinquencies', { status: 'unknown' }],
  ['tax_delinquencies', { min_due: '1000', max_due: '5000' }],
  ['tax_delinquencies', { county: 'miami-dade,broward', max_due: '2000' }],
  ['tax_delinquencies', { parcel_id: '0131320350010' }],
  ['tax_delinquencies', { owner: 'smith' }],
  ['tax_delinquencies', { vendor: 'lienhub', min_due: '4000' }],
  ['tax_delinquencies', { certificate_number: '2024-005000' }],
  ['tax_delinquencies', { deed_eligible: 'true' }],
  ['tax_delinquencies', { county: 'miami-dade', deed_eligible: 'false', min_due: '3000' }],
  ['tax_delinquencies', { expires_before: '2027-06-01' }],
  ['tax_delinquencies', { expires_after: '2026-01-01', min_due: '2000' }],
];
const saved: { id: string; resource: Resource; params: Record<string, string> }[] = [];
for (const [i, [resource, params]] of SEARCHES.entries()) {
  const res = await api(ctx, owner.key).post('/v1/saved-searches', { name: `s${i}`, resource, params });
  if (res.statusCode !== 201) throw new Error(`${JSON.stringify(params)}: ${res.body}`);
  saved.push({ id: res.json().data.id, resource, params });
}

/** Every id the search endpoint returns for the params, all pages. */
async function resultIds(resource: Resource, params: Record<string, string>): Promise<Set<string>> {
  const ids = new Set<string>();
  for (let offset = 0; ; offset += 500) {
    const q = new URLSearchParams({ ...params, limit: '500', offset: String(offset) });
    const res = await ctx.app.inject({
      url: `${ENDPOINT[resource]}?${q}`,
      headers: { authorization: `Bearer ${reader.key}` },
    });
    if (res.statusCode !== 200) throw new Error(`${resource} search: ${res.statusCode} ${res.body}`);
    const page = res.json().data as { id: string | number }[];
    for (const r of page) ids.add(String(r.id));
    if (page.length < 500) return ids;
  }
}

/** Each record of the resource's table as text: equal before and after means the load did not change it. */
async function snapshot(resource: Resource): Promise<Map<string, string>> {
  const rows = await sql.unsafe<{ id: string; row: string }[]>(
    `SELECT id::text, x::text AS row FROM ${resource === 'parcels' ? 'core.parcels' : 'core.tax_delinquencies'} x`,
  );
  return new Map(rows.map((r) => [r.id, r.row]));
}

const recorded = new Set<string>();
const found: Record<Resource, number> = { parcels: 0, tax_delinquencies: 0 };
const searchesMatched = new Set<string>();

/** Runs a documented import command, then checks its pairs against the exhaustive definition. */
async function importAndCheck(t: Test, resource: Resource, line: string[]) {
  const before = await snapshot(resource);
  const mine = saved.filter((s) => s.resource === resource);
  const resultsBefore = await Promise.all(mine.map((s) => resultIds(resource, s.params)));
  const command = parseCommand([...line, '--quiet']);
  if (command.help) throw new Error('help');
  const summary = await runImport(command.kind, { ...command.options, databaseUrl: db.ownerUrl });
  await matchQueued(sql);
  const after = await snapshot(resource);
  const changed = [...after].filter(([id, row]) => before.get(id) !== row).map(([id]) => id);
  const expected: string[] = [];
  for (const [i, s] of mine.entries()) {
    const now = await resultIds(resource, s.params);
    for (const id of changed) {
      const pair = `${s.id}:${id}`;
      if (now.has(id) && !resultsBefore[i]!.has(id) && !recorded.has(pair)) expected.push(pair);
    }
  }
  expected.sort();
  const got = await pairsOfLoad(sql, summary.loadId);
  t.same(got, expected, `${got.length} pairs: every search over the ${changed.length} changed records`);
  for (const p of got) {
    recorded.add(p);
    searchesMatched.add(p.split(':')[0]!);
  }
  found[resource] += got.length;
  return { got, changed };
}

/** A copy of a CSV fixture with some fields of some records changed: `edit(fields, index)` edits in place. */
function changedCopy(path: string, name: string, edit: (f: Record<string, string>, i: number) => void): string {
  const [head, ...lines] = readFileSync(path, 'utf8').split(/\r?\n/);
  const columns = parseCsv(head!.replace(/^\uFEFF/, ''))!;
  const quote = (v: string) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
  const out = lines
    .filter((l) => l !== '')
    .map((l, i) => {
      const f = parseCsv(l)!;
      const row = Object.fromEntries(columns.map((c, j) => [c, f[j] ?? '']));
      edit(row, i);
      return columns.map((c) => quote(row[c]!)).join(',');
    });
  const file = join(scratch, name);
  writeFileSync(file, [head, ...out].join('\n') + '\n');
  return file;
}

const NAL = fixture('nal/NAL49F202501.csv');
const DELINQUENCIES = fixture('delinquencies/standard-2025.csv');
const scale = (v: string, k: number) => (v === '' ? v : String(Math.round(Number(v) * k)));

t.test('parcels: the real NAL, a changed roll, and the real one again', async (t) => {
  const first = await importAndCheck(t, 'parcels', ['nal', NAL, '--max-delete-rate', '1']);
  t.ok(first.changed.length > 100, `the first roll changed ${first.changed.length} parcels`);
  const changedRoll = changedCopy(NAL, 'NAL49F202501-changed.csv', (f, i) => {
    if (i % 3 === 0) f.JV = scale(f.JV!, 1.6);
    if (i % 3 === 1) f.JV = scale(f.JV!, 0.5);
    if (i % 4 === 0) f.AV_SD = scale(f.AV_SD!, 0.4);
    if (i % 5 === 0) f.DOR_UC = f.DOR_UC === '01' ? '02' : '01';
    if (i % 6 === 0) f.own_name = `JOHNSON HEIRS ${i}`;
    if (i % 7 === 0) Object.assign(f, { SALE_PRC1: '250000', SALE_YR1: '2025', SALE_MO1: '3' });
  });
  const second = await importAndCheck(t, 'parcels', ['nal', changedRoll, '--max-delete-rate', '1']);
  t.ok(second.got.length > 0, 'the changed roll brings parcels into searches');
  const back = await importAndCheck(t, 'parcels', ['nal', NAL, '--max-delete-rate', '1']);
  t.ok(back.changed.length > 50, 'the roll changed back (records left and re-entered: not new again)');
  const same = await importAndCheck(t, 'parcels', ['nal', NAL, '--max-delete-rate', '1']);
  t.same([same.changed.length, same.got.length], [0, 0], 'the same roll again changes nothing and matches nothing');
});

t.test('delinquencies: the real list, a changed list, and the real one again', async (t) => {
  const first = await importAndCheck(t, 'tax_delinquencies', [
    'delinquencies',
    DELINQUENCIES,
    '--max-delete-rate',
    '1',
  ]);
  t.ok(first.changed.length > 100, `the first list changed ${first.changed.length} records`);
  const changedList = changedCopy(DELINQUENCIES, 'standard-2025-changed.csv', (f, i) => {
    if (i % 3 === 0) f.total_due = (Number(f.total_due) * 2 + 1).toFixed(2);
    if (i % 3 === 1) f.total_due = (Number(f.total_due) / 3).toFixed(2);
    if (i % 4 === 0) f.status = f.status === 'delinquent' ? 'certificate_sold' : 'delinquent';
    if (i % 5 === 0) f.owner_name = `SMITH TRUST ${i}`;
  });
  const second = await importAndCheck(t, 'tax_delinquencies', ['delinquencies', changedList, '--max-delete-rate', '1']);
  t.ok(second.got.length > 0, 'the changed list brings records into searches');
  const back = await importAndCheck(t, 'tax_delinquencies', ['delinquencies', DELINQUENCIES, '--max-delete-rate', '1']);
  t.ok(back.changed.length > 50, 'the list changed back');
});

t.test('both resources and most searches were exercised', async (t) => {
  t.ok(
    found.parcels > 0 && found.tax_delinquencies > 0,
    `parcel pairs ${found.parcels}, delinquency pairs ${found.tax_delinquencies}`,
  );
  t.ok(searchesMatched.size >= SEARCHES.length / 2, `${searchesMatched.size} of ${SEARCHES.length} searches matched`);
});
