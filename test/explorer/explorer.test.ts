// The map explorer in headless Chromium (Debian's, through test/helpers/browser.ts): a key, a search, the polygons
// drawn from our tiles over the offline base map (a screenshot and a pixel check that the map is not blank), the side
// panel, a click on the map, a configured base map; and the page's assets over HTTP. layout.test.ts covers the base
// map, the legend and the phone layout.
import t from 'tap';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { buildTestApp } from '../helpers/app.ts';
import { launchBrowser, screenshot } from '../helpers/browser.ts';

// a browser drawing maps in software: minutes on a loaded machine
t.setTimeout(600_000);
/** Playwright's wait for a page, a selector or a function (its default, 30 s, is short on a loaded machine). */
const WAIT_MS = 120_000;

const { app, db, key } = await buildTestApp(t);
await db.sql`UPDATE accounts.clients SET custom_rpm = 1000000, custom_monthly_credits = 100000000`;
const base = await app.listen({ host: '127.0.0.1', port: 0 });

const browser: Browser = await launchBrowser();
t.teardown(() => browser.close());

/** A page of the explorer that records the hosts it talked to and the errors it logged. */
async function openExplorer(origin: string) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.setDefaultTimeout(WAIT_MS);
  const requested: string[] = [];
  const errors: string[] = [];
  page.on('request', (r) => requested.push(r.url()));
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => (m.type() === 'error' ? errors.push(m.text()) : undefined));
  await page.goto(`${origin}/explorer`);
  await page.waitForFunction(() =>
    (window as unknown as { explorerMap?: { loaded(): boolean } }).explorerMap?.loaded(),
  );
  return { page, requested, errors };
}

async function useKey(page: Page, value: string) {
  await page.fill('#key', value);
  await page.click('#key-form button');
  await page.waitForFunction(() => !/Checking/.test(document.getElementById('key-status')!.textContent ?? ''));
  return page.textContent('#key-status');
}

/** Waits until the map has drawn parcel polygons from the tiles and is idle. */
async function polygonsDrawn(page: Page): Promise<number> {
  await page.waitForFunction(
    () => {
      const map = (window as unknown as { explorerMap: import('maplibre-gl').Map }).explorerMap;
      return map.loaded() && !map.isMoving() && map.queryRenderedFeatures({ layers: ['parcel-fill'] }).length > 0;
    },
    undefined,
    { timeout: WAIT_MS, polling: 200 },
  );
  return page.evaluate(
    () =>
      (window as unknown as { explorerMap: import('maplibre-gl').Map }).explorerMap.queryRenderedFeatures({
        layers: ['parcel-fill'],
      }).length,
  );
}

/** Share of the PNG's pixels within `tolerance` of each colour, decoded by the browser itself (on a blank page). */
async function pixelShares(png: Buffer, colours: Record<string, [number, number, number]>, tolerance = 24) {
  const blank = await browser.newPage();
  try {
    return await blank.evaluate(
      async ({ b64, colours, tolerance }) => {
        const blob = await (await fetch(`data:image/png;base64,${b64}`)).blob();
        const bitmap = await createImageBitmap(blob);
        const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
        const ctx = canvas.getContext('2d')!;
        ctx.drawImage(bitmap, 0, 0);
        const { data } = ctx.getImageData(0, 0, bitmap.width, bitmap.height);
        const total = data.length / 4;
        const out: Record<string, number> = {};
        for (const [name, [r, g, b]] of Object.entries(colours)) {
          let n = 0;
          for (let i = 0; i < data.length; i += 4) {
            if (Math.abs(data[i]! - r) + Math.abs(data[i + 1]! - g) + Math.abs(data[i + 2]! - b) <= tolerance) n++;
          }
          out[name] = n / total;
        }
        return out;
      },
      { b64: png.toString('base64'), colours, tolerance },
    );
  } finally {
    await blank.close();
  }
}

const rowsOf = (page: Page, table: string) =>
  page.$$eval(`#${table} tbody tr`, (trs) => trs.map((tr) => tr.textContent));

t.test('a person pastes a key, searches, sees the polygons and the side panel', async (t) => {
  const { page, requested, errors } = await openExplorer(base);
  t.equal(await page.isHidden('#parcel-panel'), true, 'no panel before a parcel is chosen');

  t.match(await useKey(page, 'flprop_live_notakey'), /Invalid API key/, 'a wrong key is said so');
  t.match(await useKey(page, key), /Key accepted: Growth,/, 'the key is checked (for free) and accepted');

  await page.fill('#query', 'SMITH JOHN');
  await page.click('#search-form button');
  await page.waitForSelector('#results button[data-parcel-id="1"]');
  t.match(await page.textContent('#search-status'), /^\d+ parcels match\.$/);
  const listed = await page.$$eval('#results button', (bs) => bs.map((b) => Number(b.dataset.parcelId)));
  const api = (
    await app.inject({
      url: '/v1/parcels/search?query=SMITH%20JOHN&limit=25',
      headers: { authorization: `Bearer ${key}` },
    })
  ).json();
  t.same(
    listed,
    api.data.map((p: { id: number }) => p.id),
    'the results of the API, in its order',
  );

  await page.click('#results button[data-parcel-id="1"]');
  await page.waitForSelector('#parcel-panel[data-parcel-id="1"]');
  t.equal(await page.textContent('#parcel-title'), 'SMITH JOHN');
  t.match(await page.textContent('#parcel-subtitle'), /123 OAK DR · Miami-Dade County/);
  t.match(await page.textContent('#parcel-fields'), /Parcel id0131320350010/);
  t.match(await page.textContent('#parcel-fields'), /Just value\$840,500/);
  const sales = await rowsOf(page, 'sales');
  t.equal(sales.length, 3, 'three sales (fixtures)');
  t.match(sales[0], /2021-03-01\$455,000/, 'newest first');
  const delinquencies = await rowsOf(page, 'delinquencies');
  t.equal(delinquencies.length, 3, 'three delinquency records (fixtures)');
  t.match(delinquencies.join(' '), /2024delinquent/);

  const drawn = await polygonsDrawn(page);
  t.ok(drawn > 10, `${drawn} parcel polygons drawn around parcel 1`);
  const selected = await page.evaluate(() =>
    (window as unknown as { explorerMap: import('maplibre-gl').Map }).explorerMap.getFilter('parcel-selected'),
  );
  t.same(selected, ['==', ['id'], 1], 'the parcel is outlined');

  const shot = await page.locator('#map').screenshot();
  await screenshot(page, 'explorer-search');
  const shares = await pixelShares(shot, {
    // the offline base map's land (map-style.js, BASE.land), under the parcels
    background: [0xf6, 0xf3, 0xea],
    // #f4a261 (residential) at 60% over the land
    residential: [
      Math.round(0.6 * 0xf4 + 0.4 * 0xf6),
      Math.round(0.6 * 0xa2 + 0.4 * 0xf3),
      Math.round(0.6 * 0x61 + 0.4 * 0xea),
    ],
  });
  t.ok(shares.background! < 0.9, `the map is not blank: ${(100 * shares.background!).toFixed(1)}% background`);
  t.ok(shares.residential! > 0.05, `residential parcels fill ${(100 * shares.residential!).toFixed(1)}% of the map`);

  // a click on a neighbour opens it: parcel 2 shares parcel 1's east edge
  const point = await page.evaluate(() => {
    const map = (window as unknown as { explorerMap: import('maplibre-gl').Map }).explorerMap;
    const p = map.project([-80.19955, 25.770135]);
    const box = map.getCanvas().getBoundingClientRect();
    return { x: box.left + p.x, y: box.top + p.y };
  });
  await page.mouse.click(point.x, point.y);
  await page.waitForSelector('#parcel-panel[data-parcel-id="2"]');
  t.equal(await page.textContent('#parcel-title'), 'SMITH JOHN & MARY', 'the clicked parcel');

  const origins = new Set(requested.map((u) => new URL(u).origin));
  t.same([...origins], [base], 'every request went to this service: no CDN');
  t.ok(
    requested.some((u) => /\/v1\/tiles\/parcels\/1[5-9]\/\d+\/\d+\.mvt$/.test(u)),
    'polygons came from the vector tiles',
  );
  t.same(
    errors.filter((e) => !/401|Invalid API key/.test(e)),
    [],
    'no script error',
  );
  await page.close();
});

t.test('text from the data is shown as text, never run as HTML', async (t) => {
  const hostile = '<img src=x onerror="window.pwned=1">EVIL OWNER';
  await db.sql`UPDATE core.parcels SET owner_name = ${hostile} WHERE id = 3`;
  const { page } = await openExplorer(base);
  await useKey(page, key);
  await page.fill('#query', 'EVIL OWNER');
  await page.click('#search-form button');
  await page.waitForSelector('#results button[data-parcel-id="3"]');
  await page.click('#results button[data-parcel-id="3"]');
  await page.waitForSelector('#parcel-panel[data-parcel-id="3"]');
  t.equal(await page.textContent('#parcel-title'), hostile);
  t.equal(await page.$$eval('#parcel-panel img, #results img', (imgs) => imgs.length), 0, 'no element made of it');
  t.equal(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned), undefined);
  await page.close();
});

t.test('MAP_STYLE_URL: the base map of the operator, with the parcels on top; the key never goes there', async (t) => {
  const seen: IncomingHttpHeaders[] = [];
  const styles = createServer((req, res) => {
    seen.push(req.headers);
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Content-Type', 'application/json');
    res.end(
      JSON.stringify({
        version: 8,
        name: 'operator style',
        sources: {},
        layers: [{ id: 'land', type: 'background', paint: { 'background-color': '#223344' } }],
      }),
    );
  });
  await new Promise<void>((resolve) => styles.listen(0, '127.0.0.1', resolve));
  t.teardown(() => styles.close());
  const styleUrl = `http://127.0.0.1:${(styles.address() as AddressInfo).port}/style.json`;
  const other = await buildTestApp(t, { MAP_STYLE_URL: styleUrl }, { db });
  const otherBase = await other.app.listen({ host: '127.0.0.1', port: 0 });

  const html = await other.app.inject({ url: '/explorer' });
  t.match(html.body, `data-style-url="${styleUrl}"`);
  t.match(html.headers['content-security-policy'], `connect-src 'self' https: ${new URL(styleUrl).origin}`);

  const { page, errors } = await openExplorer(otherBase);
  t.equal(
    await page.evaluate(
      () => (window as unknown as { explorerMap: import('maplibre-gl').Map }).explorerMap.getStyle().name,
    ),
    'operator style',
  );
  await useKey(page, key);
  await page.evaluate(() =>
    (window as unknown as { explorerMap: import('maplibre-gl').Map }).explorerMap.jumpTo({
      center: [-80.1985, 25.7705],
      zoom: 17,
    }),
  );
  t.ok((await polygonsDrawn(page)) > 0, 'parcels over the operator base map');
  const shot = await page.locator('#map').screenshot();
  await screenshot(page, 'explorer-style');
  const shares = await pixelShares(shot, { land: [0x22, 0x33, 0x44] });
  t.ok(shares.land! > 0.01, 'the base map shows where no parcel is');
  t.ok(seen.length > 0, 'the style was fetched');
  t.notOk(
    seen.some((h) => h.authorization !== undefined || h['x-api-key'] !== undefined),
    'without the key',
  );
  t.same(errors, []);
  await page.close();
});

t.test('the page and its assets over HTTP', async (t) => {
  const page = await app.inject({ url: '/explorer' });
  t.equal(page.statusCode, 200);
  t.match(page.headers['content-type'], /^text\/html/);
  const csp = String(page.headers['content-security-policy']);
  t.match(csp, "default-src 'none'");
  t.match(csp, "script-src 'self'");
  t.match(csp, "frame-ancestors 'none'");
  t.match(page.body, 'data-style-url=""', 'no base map configured');
  t.notMatch(page.body, /<script>|style=/, 'no inline script or style');
  t.equal(page.headers['x-ratelimit-limit'], undefined, 'a public page, outside the metered API');

  for (const [path, type] of [
    ['/explorer/explorer.js', /^text\/javascript/],
    ['/explorer/map-style.js', /^text\/javascript/],
    ['/explorer/explorer.css', /^text\/css/],
    ['/explorer/maplibre/maplibre-gl.mjs', /^text\/javascript/],
    ['/explorer/maplibre/maplibre-gl-worker.mjs', /^text\/javascript/],
    ['/explorer/maplibre/maplibre-gl.css', /^text\/css/],
  ] as const) {
    const res = await app.inject({ url: path });
    t.equal(res.statusCode, 200, path);
    t.match(res.headers['content-type'], type);
    const again = await app.inject({ url: path, headers: { 'if-none-match': String(res.headers.etag) } });
    t.equal(again.statusCode, 304, `${path} revalidates`);
  }
  for (const path of [
    '/explorer/package.json',
    '/explorer/../package.json',
    '/explorer/%2e%2e/%2e%2e/package.json',
    '/explorer/maplibre/maplibre-gl.mjs.map',
    '/explorer/maplibre/../../src/config.ts',
  ]) {
    const res = await app.inject({ url: path });
    t.equal(res.statusCode, 404, path);
    t.equal(res.json().error.code, 'not_found');
  }
});
