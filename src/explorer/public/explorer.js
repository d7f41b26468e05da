// The map explorer's script (served from /explorer/, as the Content-Security-Policy requires). The key is kept in
// this tab's sessionStorage and sent only to this origin's /v1 API and tiles; every text from the API is written
// with textContent, never as HTML.
/* global document, window, sessionStorage, fetch, location, URLSearchParams */
import * as maplibregl from './maplibre/maplibre-gl.mjs';
import { BASE, USE_GROUPS, offlineStyle, useColour } from './map-style.js';

const API = `${location.origin}/v1`;
const TILEJSON = `${API}/tiles/parcels.json`;
const KEY_ITEM = 'florida-explorer-key';
const MIN_ZOOM = 14; // the tiles' minzoom (TileJSON): no parcels below it
const FLORIDA = [
  [-87.64, 24.39],
  [-79.97, 31.0],
];

const $ = (id) => document.getElementById(id);
const state = { key: sessionStorage.getItem(KEY_ITEM) ?? '', selected: null };

/** A GET of the API with the key; the parsed JSON, or an Error carrying the API's message. */
async function api(path) {
  const res = await fetch(`${API}${path}`, { headers: { Authorization: `Bearer ${state.key}` } });
  const body = await res.json().catch(() => null);
  if (!res.ok) throw new Error(body?.error?.message ?? `The API answered ${res.status}.`);
  return body;
}

const dollars = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumFractionDigits: 0 });
const count = new Intl.NumberFormat('en-US');
const present = (v) => v !== null && v !== undefined && v !== '';
/** A value as text, or `missing` (a table cell's dash unless said otherwise) when the record has none. */
const text = (v, missing = '—') => (present(v) ? String(v) : missing);
const money = (n, missing = '—') => (present(n) ? dollars.format(n) : missing);
/** The present parts joined by a space, or `missing` when none is. */
const joined = (parts, missing) => parts.filter(present).join(' ') || missing;
/** "1 parcel matches", "2 parcels match": the count with the singular or the plural phrase. */
const plural = (n, one, many) => `${count.format(n)} ${n === 1 ? one : many}`;

/** The last sale in words: date and price, whichever the roll has, or that none is recorded. */
function lastSale(date, price) {
  if (!present(date) && !present(price)) return 'no recorded sale';
  if (!present(price)) return `${date} (price not recorded)`;
  if (!present(date)) return `${money(price)} (date not recorded)`;
  return `${date} for ${money(price)}`;
}

const styleUrl = document.body.dataset.styleUrl;

const map = new maplibregl.Map({
  container: 'map',
  style: styleUrl || offlineStyle,
  bounds: FLORIDA,
  fitBoundsOptions: { padding: 16 },
  attributionControl: { compact: true },
  // the key goes with the API's own requests only, never to a base map's servers
  transformRequest: (url) =>
    url.startsWith(`${API}/`) ? { url, headers: { Authorization: `Bearer ${state.key}` } } : { url },
});
map.addControl(new maplibregl.NavigationControl({ showCompass: false }), 'top-right');
map.addControl(new maplibregl.ScaleControl({ unit: 'imperial' }), 'bottom-left');
window.explorerMap = map; // for a person in the console, and for the page test

/** One legend line: a swatch of a kind (fill, dot, outline, text) and what it means. */
function legendItem(kind, colour, label, detail) {
  const item = document.createElement('li');
  const swatch = document.createElement('span');
  swatch.className = `swatch ${kind}`;
  swatch.dataset.colour = colour;
  const words = document.createElement('span');
  words.textContent = label;
  if (detail) {
    const small = document.createElement('small');
    small.textContent = ` ${detail}`;
    words.append(small);
  }
  item.append(swatch, words);
  return item;
}

/** Fills the legend: parcel colours, search marks, and the offline base map's parts when it is the one shown. */
function buildLegend() {
  const body = $('legend-body');
  const section = (title, items) => {
    const h = document.createElement('h4');
    h.textContent = title;
    const list = document.createElement('ul');
    list.append(...items);
    body.append(h, list);
  };
  section('Parcels by use (DOR code), from zoom 14', [
    ...USE_GROUPS.map((g) => legendItem('fill', g.colour, g.label, g.codes)),
    legendItem('dot', '#1d4ed8', 'Search result'),
    legendItem('outline', '#1d4ed8', 'Selected parcel'),
  ]);
  if (!styleUrl) {
    section('Base map', [
      legendItem('fill', BASE.land, 'Florida'),
      legendItem('fill', BASE.water, 'Water'),
      legendItem('fill', BASE.county, 'Area of a county’s parcels'),
      legendItem('text', BASE.name, 'County, parcels loaded'),
      legendItem('text', BASE.nameUnloaded, 'County, none loaded'),
    ]);
  }
  // The swatches' colours come from the tables above; the policy allows no inline style attribute, so they are set
  // through the CSSOM, which it permits.
  for (const swatch of body.querySelectorAll('.swatch')) {
    const colour = swatch.dataset.colour;
    if (swatch.classList.contains('text')) swatch.style.color = colour;
    else if (swatch.classList.contains('outline')) swatch.style.borderColor = colour;
    else swatch.style.backgroundColor = colour;
  }
  // open on a wide screen; on a phone it waits for a tap, to leave the map clear
  $('legend').open = window.matchMedia('(min-width: 701px)').matches;
}
buildLegend();

const polygons = ['match', ['geometry-type'], ['Polygon', 'MultiPolygon'], true, false];

function addParcels() {
  if (map.getSource('parcels')) return;
  map.addSource('parcels', { type: 'vector', url: TILEJSON });
  map.addLayer({
    id: 'parcel-fill',
    type: 'fill',
    source: 'parcels',
    'source-layer': 'parcels',
    filter: polygons,
    paint: { 'fill-color': useColour, 'fill-opacity': 0.6 },
  });
  map.addLayer({
    id: 'parcel-line',
    type: 'line',
    source: 'parcels',
    'source-layer': 'parcels',
    filter: polygons,
    paint: { 'line-color': '#5b4636', 'line-width': ['interpolate', ['linear'], ['zoom'], 15, 0.3, 19, 1.5] },
  });
  map.addLayer({
    id: 'parcel-point',
    type: 'circle',
    source: 'parcels',
    'source-layer': 'parcels',
    filter: ['==', ['geometry-type'], 'Point'],
    paint: { 'circle-radius': 2, 'circle-color': useColour },
  });
  map.addLayer({
    id: 'parcel-selected',
    type: 'line',
    source: 'parcels',
    'source-layer': 'parcels',
    filter: ['==', ['id'], -1],
    paint: { 'line-color': '#1d4ed8', 'line-width': 3 },
  });
  map.addSource('results', { type: 'geojson', data: { type: 'FeatureCollection', features: [] } });
  map.addLayer({
    id: 'results',
    type: 'circle',
    source: 'results',
    paint: {
      'circle-radius': ['interpolate', ['linear'], ['zoom'], 6, 4, 16, 7],
      'circle-color': '#1d4ed8',
      'circle-stroke-color': '#ffffff',
      'circle-stroke-width': 2,
      'circle-opacity': ['interpolate', ['linear'], ['zoom'], 15, 1, 16, 0.35],
    },
  });
}

/** Tiles are fetched with the key at the time: a new key reloads them. */
function reloadParcels() {
  for (const id of ['results', 'parcel-selected', 'parcel-point', 'parcel-line', 'parcel-fill']) {
    if (map.getLayer(id)) map.removeLayer(id);
  }
  for (const id of ['results', 'parcels']) if (map.getSource(id)) map.removeSource(id);
  addParcels();
}

function showZoomHint() {
  $('zoom-hint').hidden = !state.key || map.getZoom() >= MIN_ZOOM;
}
map.on('zoomend', showZoomHint);

function setStatus(id, message, isError = false) {
  $(id).textContent = message;
  $(id).classList.toggle('error', isError);
}

async function useKey(key) {
  state.key = key.trim();
  sessionStorage.setItem(KEY_ITEM, state.key);
  setStatus('key-status', 'Checking the key…');
  try {
    const usage = await api('/account/usage'); // free: it checks the key without spending a credit
    const { plan, plan_name: planName, events_count: used, monthly_quota: quota } = usage.data;
    setStatus(
      'key-status',
      `Key accepted: ${planName ?? plan}, ${count.format(used)} of ${plural(quota, 'credit', 'credits')} used this month.`,
    );
    document.body.classList.add('has-key');
    if (map.isStyleLoaded()) reloadParcels();
    showZoomHint();
  } catch (err) {
    setStatus('key-status', err.message, true);
  }
}

$('key-form').addEventListener('submit', (event) => {
  event.preventDefault();
  void useKey($('key').value);
});

function fieldRow(dl, name, value) {
  const dt = document.createElement('dt');
  dt.textContent = name;
  const dd = document.createElement('dd');
  dd.textContent = value;
  dl.append(dt, dd);
}

function tableRows(table, rows, cells, empty) {
  const body = table.tBodies[0];
  body.replaceChildren();
  if (rows.length === 0) {
    const tr = body.insertRow();
    const td = tr.insertCell();
    td.colSpan = table.tHead.rows[0].cells.length;
    td.textContent = empty;
    return;
  }
  for (const row of rows) {
    const tr = body.insertRow();
    for (const value of cells(row)) tr.insertCell().textContent = value;
  }
}

/** Opens a parcel: highlights it and fills the side panel with its fields, sales and delinquencies. */
async function select(id, { fly = false } = {}) {
  state.selected = id;
  if (map.getLayer('parcel-selected')) map.setFilter('parcel-selected', ['==', ['id'], id]);
  const panel = $('parcel-panel');
  panel.hidden = false;
  panel.removeAttribute('data-parcel-id');
  $('parcel-title').textContent = 'Loading…';
  try {
    const parcel = (await api(`/parcels/${id}`)).data;
    if (state.selected !== id) return;
    if (fly && parcel.centroid_lng !== null) {
      map.flyTo({ center: [parcel.centroid_lng, parcel.centroid_lat], zoom: Math.max(map.getZoom(), 17) });
    }
    const byParcel = new URLSearchParams({ county: parcel.county_slug, parcel_id: parcel.parcel_id, limit: '20' });
    const [sales, delinquencies] = await Promise.all([
      api(`/parcels/${id}/sales?limit=20`),
      api(`/tax-delinquencies/by-parcel?${byParcel}`),
    ]);
    if (state.selected !== id) return;
    $('parcel-title').textContent = text(parcel.owner_name, 'Owner not recorded');
    $('parcel-subtitle').textContent =
      `${text(parcel.site_address_full, 'No site address')} · ${parcel.county_name} County`;
    const dl = $('parcel-fields');
    dl.replaceChildren();
    for (const [name, value] of [
      ['Parcel id', parcel.parcel_id],
      ['Use', joined([parcel.dor_use_code, parcel.land_use_description], 'not recorded')],
      ['City', joined([parcel.site_city, parcel.site_zip], 'not recorded')],
      ['Just value', money(parcel.just_value, 'not recorded')],
      ['Assessed value', money(parcel.assessed_value, 'not recorded')],
      ['Taxable value', money(parcel.taxable_value, 'not recorded')],
      ['Year built', text(parcel.year_built, 'not recorded')],
      ['Last sale', lastSale(parcel.last_sale_date, parcel.last_sale_price)],
    ]) {
      fieldRow(dl, name, value);
    }
    tableRows(
      $('sales'),
      sales.data,
      (s) => [text(s.sale_date), money(s.sale_price), text(s.deed_code), text(s.grantee)],
      'No recorded sale.',
    );
    tableRows(
      $('delinquencies'),
      delinquencies.data,
      (d) => [text(d.tax_year), text(d.status), money(d.total_due), text(d.certificate_number)],
      'No delinquency record in a loaded feed.',
    );
    panel.dataset.parcelId = String(id);
  } catch (err) {
    $('parcel-title').textContent = err.message;
  }
}

/** The phone layout's drawer (the search column on a wide screen, where these buttons are hidden). */
function setDrawer(open) {
  document.body.classList.toggle('drawer-open', open);
  $('drawer-open').setAttribute('aria-expanded', String(open));
}
$('drawer-open').addEventListener('click', () => setDrawer(true));
$('drawer-close').addEventListener('click', () => setDrawer(false));

$('close-panel').addEventListener('click', () => {
  $('parcel-panel').hidden = true;
  state.selected = null;
  if (map.getLayer('parcel-selected')) map.setFilter('parcel-selected', ['==', ['id'], -1]);
});

async function search(query) {
  setStatus('search-status', 'Searching…');
  const list = $('results');
  list.replaceChildren();
  try {
    const { data, pagination } = await api(`/parcels/search?${new URLSearchParams({ query, limit: '25' })}`);
    const { total } = pagination;
    setStatus(
      'search-status',
      total === 0
        ? 'No parcel matches.'
        : `${plural(total, 'parcel matches', 'parcels match')}${total > data.length ? `; showing the first ${data.length}` : ''}.`,
    );
    const located = data.filter((p) => p.centroid_lng !== null);
    map.getSource('results')?.setData({
      type: 'FeatureCollection',
      features: located.map((p) => ({
        type: 'Feature',
        id: p.id,
        properties: { id: p.id },
        geometry: { type: 'Point', coordinates: [p.centroid_lng, p.centroid_lat] },
      })),
    });
    for (const p of data) {
      const item = document.createElement('li');
      const button = document.createElement('button');
      button.type = 'button';
      button.dataset.parcelId = String(p.id);
      const owner = document.createElement('strong');
      owner.textContent = text(p.owner_name, 'Owner not recorded');
      const where = document.createElement('span');
      where.textContent = `${text(p.site_address_full, 'No site address')}, ${p.county_name}`;
      button.append(owner, where);
      button.addEventListener('click', () => {
        setDrawer(false); // on a phone, back to the map, where the parcel opens
        void select(p.id, { fly: true });
      });
      item.append(button);
      list.append(item);
    }
    if (located.length > 0) {
      const lngs = located.map((p) => p.centroid_lng);
      const lats = located.map((p) => p.centroid_lat);
      map.fitBounds(
        [
          [Math.min(...lngs), Math.min(...lats)],
          [Math.max(...lngs), Math.max(...lats)],
        ],
        { padding: 60, maxZoom: 17, duration: 0 },
      );
    }
  } catch (err) {
    setStatus('search-status', err.message, true);
  }
}

$('search-form').addEventListener('submit', (event) => {
  event.preventDefault();
  if (!state.key) return setStatus('search-status', 'Paste an API key first.', true);
  void search($('query').value.trim());
});

// A click opens the parcel drawn there; where none is drawn (zoomed out), the parcel containing the point.
map.on('click', async (event) => {
  if (!state.key) return;
  const [hit] = map.queryRenderedFeatures(event.point, { layers: ['results', 'parcel-fill', 'parcel-point'] });
  const id = hit ? Number(hit.id ?? hit.properties.id) : null;
  if (id !== null) return select(id);
  try {
    const { lng, lat } = event.lngLat;
    const { data } = await api(`/parcels/search?${new URLSearchParams({ point: `${lng},${lat}`, limit: '1' })}`);
    if (data[0]) await select(data[0].id);
  } catch (err) {
    setStatus('search-status', err.message, true);
  }
});
for (const layer of ['results', 'parcel-fill', 'parcel-point']) {
  map.on('mouseenter', layer, () => (map.getCanvas().style.cursor = 'pointer'));
  map.on('mouseleave', layer, () => (map.getCanvas().style.cursor = ''));
}

map.on('load', () => {
  if (state.key) {
    $('key').value = state.key;
    void useKey(state.key); // checks the key kept from before, then draws the parcels with it
  }
  showZoomHint();
});
