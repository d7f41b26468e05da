// The explorer's map style: the parcels' colours by use, and the offline base map drawn from this service's own
// tiles. explorer.js builds the map and its legend from these tables.
/* global location */

/**
 * The parcels' fill colours by the DOR use code's first two digits, lowest code of each group first: the legend and
 * the map's colour expression are both made from this table.
 */
export const USE_GROUPS = [
  { from: 0, colour: '#f4a261', label: 'Residential', codes: '00–09' },
  { from: 10, colour: '#e76f51', label: 'Commercial', codes: '10–39' },
  { from: 40, colour: '#8d6cab', label: 'Industrial', codes: '40–49' },
  { from: 50, colour: '#7cb342', label: 'Agricultural', codes: '50–69' },
  { from: 70, colour: '#4fa3c7', label: 'Institutional', codes: '70–79' },
  { from: 80, colour: '#9e9e9e', label: 'Government, other', codes: '80–99, none' },
];
export const useColour = [
  'step',
  ['to-number', ['slice', ['coalesce', ['get', 'dor_use_code'], '99'], 0, 2], 99],
  USE_GROUPS[0].colour,
  ...USE_GROUPS.slice(1).flatMap((g) => [g.from, g.colour]),
];

/** The offline base map's colours (explorer.css's legend swatches name the same ones). */
export const BASE = {
  water: '#cddfe9',
  land: '#f6f3ea',
  coast: '#8fa9b8',
  county: '#e9e1cc',
  countyLine: '#a89a78',
  name: '#3d3a33',
  nameUnloaded: '#8a857a',
};

/**
 * The base map when no MAP_STYLE_URL is configured: Florida's land, the counties as their mapped parcels show them,
 * and every county's name, from this service's own tiles (no internet). No glyphs URL: MapLibre draws the names with
 * the browser's own fonts.
 */
export const offlineStyle = {
  version: 8,
  name: 'Florida offline base map',
  sources: {
    basemap: {
      type: 'vector',
      tiles: [`${location.origin}/explorer/basemap/{z}/{x}/{y}.mvt`],
      minzoom: 0,
      maxzoom: 10,
      bounds: [-88, 24, -79.5, 31.5],
      attribution: 'Coast approximate; counties as their parcels show them',
    },
  },
  layers: [
    { id: 'water', type: 'background', paint: { 'background-color': BASE.water } },
    { id: 'florida', type: 'fill', source: 'basemap', 'source-layer': 'florida', paint: { 'fill-color': BASE.land } },
    {
      id: 'florida-coast',
      type: 'line',
      source: 'basemap',
      'source-layer': 'florida',
      paint: { 'line-color': BASE.coast, 'line-width': 1 },
    },
    {
      id: 'counties',
      type: 'fill',
      source: 'basemap',
      'source-layer': 'counties',
      // fades out as the parcels come in
      paint: { 'fill-color': BASE.county, 'fill-opacity': ['interpolate', ['linear'], ['zoom'], 12, 1, 15, 0] },
    },
    {
      id: 'county-lines',
      type: 'line',
      source: 'basemap',
      'source-layer': 'counties',
      paint: { 'line-color': BASE.countyLine, 'line-width': 1, 'line-dasharray': [3, 2] },
    },
    {
      id: 'county-labels',
      type: 'symbol',
      source: 'basemap',
      'source-layer': 'county_labels',
      maxzoom: 14,
      layout: {
        'text-field': ['get', 'name'],
        'text-font': ['sans-serif'],
        'text-size': ['interpolate', ['linear'], ['zoom'], 5, 10, 9, 14],
        'text-padding': 1,
      },
      paint: {
        'text-color': ['case', ['>', ['get', 'parcel_count'], 0], BASE.name, BASE.nameUnloaded],
        'text-halo-color': '#ffffff',
        'text-halo-width': 1.2,
      },
    },
  ],
};
