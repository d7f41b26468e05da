// The explorer in headless Chromium at a laptop's size (1366×900) and a phone's (390×844): the offline base map
// draws Florida and its counties with no internet (pixels inside Florida are land, not the water around it), the
// legend says what each colour means, counts and missing values read as sentences, the shared header links the
// other parts, and on the phone the map comes first with the key, search and list in a drawer. Screenshots go to
// .local/screenshots/explorer-{laptop,phone}-*.png.
import t from 'tap';
import type { Browser, Page } from 'playwright-core';
import { buildTestApp } from '../helpers/app.ts';
import { launchBrowser, screenshot } from '../helpers/browser.ts';

// a browser drawing maps in software: minutes on a loaded machine
t.setTimeout(600_000);
const WAIT_MS = 120_000;

const { app, db, key } = await buildTestApp(t);
await db.sql`UPDATE accounts.clients SET custom_rpm = 1000000, custom_monthly_credits = 100000000`;
await db.sql`SELECT ingest.refresh_county_shapes()`;
const base = await app.listen({ host: '127.0.0.1', port: 0 });
const browser: Browser = await launchBrowser();
t.teardown(() => browser.close());

type Rgb = [number, number, number];
const hex = (h: string): Rgb => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16)) as Rgb;
/** The offline style's colours (src/explorer/public/map-style.js, BASE). */
const WATER = hex('#cddfe9');
const LAND = hex('#f6f3ea');
const COUNTY = hex('#e9e1cc');
const near = (a: Rgb, b: Rgb, tolerance = 12) =>
  Math.abs(a[0] - b[0]) + Math.abs(a[1] - b[1]) + Math.abs(a[2] - b[2]) <= tolerance;

type MapWindow = { explorerMap: import('maplibre-gl').Map };

async function open(size: { width: number; height: number }) {
  const page = await browser.newPage({ viewport: size });
  page.setDefaultTimeout(WAIT_MS);
  const requested: string[] = [];
  const errors: string[] = [];
  page.on('request', (r) => requested.push(r.url()));
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => (m.type() === 'error' ? errors.push(m.text()) : undefined));
  await page.goto(`${base}/explorer`);
  await idle(page);
  return { page, requested, errors };
}

/** Waits until the map has loaded its tiles and stands still. */
async function idle(page: Page) {
  await page.waitForFunction(
    () => {
      const map = (window as unknown as MapWindow).explorerMap;
      return map?.loaded() && map.areTilesLoaded() && !map.isMoving();
    },
    undefined,
    { timeout: WAIT_MS, polling: 200 },
  );
}

/** The colours of the map's screenshot at these longitude/latitude points, decoded by the browser. */
async function coloursAt(page: Page, points: [number, number][]): Promise<Rgb[]> {
  const xy = await page.evaluate(
    (pts) => pts.map((p) => (window as unknown as MapWindow).explorerMap.project(p)).map((p) => [p.x, p.y]),
    points,
  );
  const png = await page.locator('#map canvas').screenshot();
  const blank = await browser.newPage();
  try {
    return (await blank.evaluate(
      async ({ b64, xy }) => {
        const bitmap = await createImageBitmap(await (await fetch(`data:image/png;base64,${b64}`)).blob());
        const ctx = new OffscreenCanvas(bitmap.width, bitmap.height).getContext('2d')!;
        ctx.drawImage(bitmap, 0, 0);
        return xy.map(([x, y]) => Array.from(ctx.getImageData(Math.round(x!), Math.round(y!), 1, 1).data.slice(0, 3)));
      },
      { b64: png.toString('base64'), xy },
    )) as Rgb[];
  } finally {
    await blank.close();
  }
}

/** Inland points, away from any county name, and points of open water. */
const INLAND: [number, number][] = [
  [-81.15, 27.75],
  [-82.9, 30.45],
  [-81.95, 29.3],
  [-86.6, 30.95],
];
const SEA: [number, number][] = [
  [-85.5, 27.5],
  [-79.5, 29.0],
];

async function useKey(page: Page) {
  await page.fill('#key', key);
  await page.click('#key-form button');
  await page.waitForFunction(() => /Key accepted/.test(document.getElementById('key-status')!.textContent ?? ''));
}

async function searchFor(page: Page, query: string) {
  await page.fill('#query', query);
  await page.click('#search-form button');
  await page.waitForFunction(() => /match/.test(document.getElementById('search-status')!.textContent ?? ''));
  return page.textContent('#search-status');
}

/** A search that the API answers with exactly one parcel, and one with several. */
async function totalOf(query: string): Promise<number> {
  const res = await app.inject({
    url: `/v1/parcels/search?${new URLSearchParams({ query, limit: '1' })}`,
    headers: { authorization: `Bearer ${key}` },
  });
  return res.json().pagination.total;
}

t.test('laptop: Florida drawn offline, county names, the legend, sentences for counts and gaps', async (t) => {
  const { page, requested, errors } = await open({ width: 1366, height: 900 });
  const land = await coloursAt(page, INLAND);
  const sea = await coloursAt(page, SEA);
  t.ok(
    land.every((c) => near(c, LAND) && !near(c, WATER)),
    `inside Florida the land colour, not the water: ${JSON.stringify(land)}`,
  );
  t.ok(
    sea.every((c) => near(c, WATER)),
    `the sea around it the water colour: ${JSON.stringify(sea)}`,
  );
  const names = await page.evaluate(() =>
    (window as unknown as MapWindow).explorerMap
      .queryRenderedFeatures({ layers: ['county-labels'] })
      .map((f) => String(f.properties.name)),
  );
  t.ok(new Set(names).size >= 30, `${new Set(names).size} county names drawn`);
  t.ok(names.includes('Orange') && names.includes('Leon'), 'Orange and Leon among them');
  t.ok(
    requested.some((u) => /\/explorer\/basemap\/\d+\/\d+\/\d+\.mvt$/.test(u)),
    'from the base map tiles',
  );
  t.same([...new Set(requested.map((u) => new URL(u).origin))], [base], 'nothing from the internet');

  t.equal(await page.getAttribute('#legend', 'open'), '', 'the legend is open on a wide screen');
  const legend = (await page.textContent('#legend'))!;
  for (const words of ['Residential', 'Commercial', 'Industrial', 'Agricultural', 'Institutional', 'Government']) {
    t.match(legend, words, `the legend names ${words}`);
  }
  t.match(legend, /Search result.*Selected parcel/s);
  t.match(legend, /Florida.*Water.*County, parcels loaded.*County, none loaded/s);
  const swatches = await page.$$eval('#legend .swatch.fill', (els) =>
    els.map((e) => getComputedStyle(e).backgroundColor),
  );
  t.equal(swatches[0], 'rgb(244, 162, 97)', 'the residential swatch has the residential fill');
  t.equal(new Set(swatches).size, swatches.length, 'every fill swatch its own colour');
  await screenshot(page, 'explorer-laptop-florida');

  const header = await page.$$eval('.fl-bar a', (as) => as.map((a) => a.getAttribute('href')));
  for (const href of ['/', '/docs', '/account/signup']) t.ok(header.includes(href), `the header links ${href}`);
  t.equal(await page.getAttribute('.fl-bar a[href="/explorer"]', 'aria-current'), 'page', 'the explorer marked');

  // the county drawn from the parcels, around downtown Miami
  await page.evaluate(() =>
    (window as unknown as MapWindow).explorerMap.jumpTo({ center: [-80.194, 25.7712], zoom: 12.5 }),
  );
  await idle(page);
  const [county] = await coloursAt(page, [[-80.194, 25.7712]]);
  t.ok(near(county!, COUNTY), `Miami-Dade's parcels' area is drawn: ${JSON.stringify(county)}`);

  await useKey(page);
  const candidates = ['LOPEZ JENNIFER & JAMES', 'THOMAS MARY', 'GARCIA PATRICIA & JAMES', 'JONES JAMES'];
  let one: string | undefined;
  for (const q of candidates) if ((await totalOf(q)) === 1) one = one ?? q;
  t.ok(one, `a search with one match among the fixtures: ${one}`);
  t.equal(await searchFor(page, one!), '1 parcel matches.');
  const many = await totalOf('SMITH JOHN');
  t.equal(await searchFor(page, 'SMITH JOHN'), `${many} parcels match.`, 'the plural, without a cut when all shown');

  // a parcel the roll records no sale for
  const [unsold] = await db.sql<{ id: number; owner_name: string }[]>`
    SELECT id::int, owner_name FROM core.parcels
     WHERE last_sale_date IS NULL AND last_sale_price IS NULL AND geom IS NOT NULL AND owner_name IS NOT NULL
     ORDER BY id LIMIT 1`;
  await searchFor(page, unsold!.owner_name);
  await page.click(`#results button[data-parcel-id="${unsold!.id}"]`);
  await page.waitForSelector(`#parcel-panel[data-parcel-id="${unsold!.id}"]`);
  const fields = (await page.textContent('#parcel-fields'))!;
  t.match(fields, /Last saleno recorded sale/, 'no recorded sale, said so');
  t.notMatch(await page.textContent('#parcel-panel'), /—\s*—/, 'never two dashes for a missing pair');
  await idle(page);
  await screenshot(page, 'explorer-laptop-parcel');
  t.same(errors, [], 'no script error');
  await page.close();
});

t.test('phone: the map first, the list in a drawer, the parcel in a sheet', async (t) => {
  const { page, errors } = await open({ width: 390, height: 844 });
  const map = (await page.locator('#map').boundingBox())!;
  t.equal(Math.round(map.width), 390, 'the map spans the width');
  t.ok(map.height > 844 * 0.7, `the map takes most of the height: ${Math.round(map.height)} px`);
  t.equal(await page.isVisible('#search-panel'), false, 'the drawer is closed');
  t.equal(await page.isVisible('#drawer-open'), true, 'a button opens it');
  t.equal(await page.getAttribute('#legend', 'open'), null, 'the legend folded, the map clear');
  const land = await coloursAt(page, INLAND.slice(0, 3));
  t.ok(
    land.every((c) => near(c, LAND) && !near(c, WATER)),
    `Florida drawn on the phone: ${JSON.stringify(land)}`,
  );
  await screenshot(page, 'explorer-phone-map');

  await page.click('#legend summary');
  t.equal(await page.getAttribute('#legend', 'open'), '', 'a tap opens the legend');
  t.ok(await page.isVisible('#legend-body'), 'and shows it');
  await screenshot(page, 'explorer-phone-legend');
  await page.click('#legend summary');

  await page.click('#drawer-open');
  await page.waitForFunction(() => {
    const r = document.getElementById('search-panel')!.getBoundingClientRect();
    return r.bottom <= window.innerHeight + 1 && r.top < window.innerHeight;
  });
  t.equal(await page.isVisible('#search-panel'), true, 'the drawer opened');
  t.equal(await page.getAttribute('#drawer-open', 'aria-expanded'), 'true');
  const drawer = (await page.locator('#search-panel').boundingBox())!;
  t.ok(drawer.width >= 389 && drawer.y > 100, 'over the map, from the bottom, the header still in view');
  await useKey(page);
  const many = await totalOf('SMITH JOHN');
  t.equal(await searchFor(page, 'SMITH JOHN'), `${many} parcels match.`);
  await page.waitForSelector('#results button[data-parcel-id="1"]');
  await screenshot(page, 'explorer-phone-drawer');

  await page.click('#results button[data-parcel-id="1"]');
  await page.waitForSelector('#parcel-panel[data-parcel-id="1"]');
  t.equal(await page.isVisible('#search-panel'), false, 'choosing a parcel closes the drawer');
  const sheet = (await page.locator('#parcel-panel').boundingBox())!;
  t.ok(sheet.width >= 389 && sheet.y > 200, 'the parcel in a sheet at the bottom, the map above it');
  t.match(await page.textContent('#parcel-fields'), /Last sale2021-03-01 for \$455,000/);
  await idle(page);
  await screenshot(page, 'explorer-phone-parcel');
  t.same(errors, [], 'no script error');
  await page.close();
});
