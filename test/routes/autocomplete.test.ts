// GET /parcels/autocomplete and api.autocomplete_parcels: every prefix of an address and of an owner name suggests
// the parcel, the last word read as a prefix and earlier words typo-tolerant; best first; bounds; metering.
import t from 'tap';
import { buildTestApp } from '../helpers/app.ts';

const { get, db } = await buildTestApp(t);
type Suggestion = { id: number; label: string; owner_name: string; site_address_full: string; county: string };
const suggest = async (query: string, extra = '') => {
  const res = await get(`/v1/parcels/autocomplete?q=${encodeURIComponent(query)}${extra}`);
  return { status: res.statusCode, body: res.json(), headers: res.headers };
};

t.test('every prefix of an address and of an owner name suggests the parcel', async (t) => {
  const [parcel] = await db.sql<{ id: number; owner_name: string; address: string }[]>`
    SELECT id::int, owner_name, address_search AS address FROM core.parcels WHERE id = 4`;
  for (const text of [parcel!.address, parcel!.owner_name]) {
    // from the first word's second letter on, each prefix of the text as typed
    for (let end = text.indexOf(' ') + 3; end <= text.length; end++) {
      const typed = text.slice(0, end);
      if (typed.endsWith(' ')) continue;
      const { status, body } = await suggest(typed, '&county=miami-dade&limit=20');
      t.equal(status, 200, typed);
      t.ok(
        body.data.some((s: Suggestion) => s.id === parcel!.id),
        `${JSON.stringify(typed)} suggests parcel ${parcel!.id} (${body.data.length} suggestions)`,
      );
    }
  }
});

t.test(
  'best first: the address before the owner name, whole words before completions, typos in earlier words',
  async (t) => {
    const address = await suggest('500 brickell');
    t.equal(address.status, 200);
    t.same(Object.keys(address.body).sort(), ['data', 'meta']);
    t.match(
      address.body.data[0],
      { label: /^500 BRICKELL AVE/, county: 'miami-dade' },
      'labelled by the address it matched',
    );
    const owner = await suggest('smith jo');
    t.equal(owner.body.data[0].label, owner.body.data[0].owner_name, 'an owner match is labelled by the owner name');
    const typo = await suggest('simth jo');
    t.same(
      typo.body.data.map((s: Suggestion) => s.id).slice(0, 2),
      owner.body.data.map((s: Suggestion) => s.id).slice(0, 2),
      'an earlier word with a typo suggests the same parcels',
    );
    const whole = await suggest('oak dr');
    const first = whole.body.data[0] as Suggestion;
    t.match(
      first.label,
      /\bOAK DR\b/,
      'a whole word (DR) before a completion (DRIVE would be one, were it not normalized)',
    );
    const [row] = await db.sql<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM api.autocomplete_parcels('500 brickell')`;
    t.equal(row!.n, address.body.data.length, 'the SQL function gives the same suggestions');
  },
);

t.test('limits, county scope, bad input and metering', async (t) => {
  t.equal((await suggest('smith')).body.data.length, 10, 'default limit 10');
  t.equal((await suggest('smith', '&limit=3')).body.data.length, 3);
  const broward = await suggest('garcia', '&county=broward');
  t.ok(broward.body.data.length > 0 && broward.body.data.every((s: Suggestion) => s.county === 'broward'));
  for (const [extra, pattern] of [
    ['&limit=21', /'limit'/],
    ['&limit=0', /'limit'/],
    ['&county=atlantis', /unknown county 'atlantis'/],
  ] as const) {
    const res = await suggest('smith', extra);
    t.equal(res.status, 400, extra);
    t.match(res.body.error.message, pattern, extra);
  }
  const missing = await get('/v1/parcels/autocomplete');
  t.equal(missing.statusCode, 400);
  t.match(missing.json().error.message, /'q' is required/);
  const blank = await suggest('  ,, ');
  t.equal(blank.status, 400, 'a query with no letter or digit');
  const before = (await get('/v1/account/usage')).json().data.events_count;
  await suggest('smith');
  await suggest('smith', '&limit=0');
  t.equal(
    (await get('/v1/account/usage')).json().data.events_count,
    before + 1,
    'one credit a suggestion list, none for a 400',
  );
  const nothing = await suggest('qqqqzzzz');
  t.same(nothing.body.data, [], 'nothing matches: an empty list');
});
