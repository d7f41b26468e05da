// The explorer's one HTML page: the shared header and footer (src/site/chrome.ts), no inline script or style (the
// Content-Security-Policy allows none); the base map's style URL travels in a data attribute, escaped. On a phone the
// map fills the screen and the key, the search and the list sit in a drawer (explorer.css).
import { chromeFooter, chromeHead, chromeHeader } from '../site/chrome.ts';

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export function explorerPage(styleUrl: string | undefined): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Map explorer · Florida Property API</title>
${chromeHead()}
<link rel="stylesheet" href="/explorer/maplibre/maplibre-gl.css">
<link rel="stylesheet" href="/explorer/explorer.css">
<script type="module" src="/explorer/explorer.js"></script>
</head>
<body data-style-url="${escapeHtml(styleUrl ?? '')}">
${chromeHeader('explorer')}
<main>
  <section id="search-panel" aria-label="Key, search and results">
    <div class="drawer-bar">
      <h1>Map explorer</h1>
      <button id="drawer-close" type="button" aria-controls="search-panel">Show the map</button>
    </div>
    <form id="key-form" autocomplete="off">
      <label for="key">API key</label>
      <div class="row">
        <input id="key" name="key" type="password" autocomplete="off" placeholder="flprop_live_…" spellcheck="false" required>
        <button type="submit">Use key</button>
      </div>
      <p id="key-status" role="status">No key yet? <a href="/account/signup">Create an account</a> to get one.</p>
    </form>
    <form id="search-form">
      <label for="query">Search parcels</label>
      <div class="row">
        <input id="query" name="query" type="search" placeholder="Owner or address, e.g. SMITH JOHN" maxlength="200" required>
        <button type="submit">Search</button>
      </div>
    </form>
    <p id="search-status" role="status">Paste a key, then search by owner or address, or click the map.</p>
    <ol id="results"></ol>
    <p class="note">Each search and each parcel opened costs credits (1 per request; the parcel panel makes three),
    like every API request; parcel tiles cost 1 each, and tiles your browser already holds cost nothing. The base map
    of Florida and its counties is free.</p>
    ${chromeFooter()}
  </section>
  <div id="map" aria-label="Map of Florida's parcels">
    <p id="zoom-hint" hidden>Zoom in to see parcels</p>
    <details id="legend">
      <summary>Legend</summary>
      <div id="legend-body"></div>
    </details>
    <button id="drawer-open" type="button" aria-controls="search-panel" aria-expanded="false">Search and list</button>
  </div>
  <section id="parcel-panel" aria-label="Parcel" hidden>
    <button id="close-panel" type="button" aria-label="Close">×</button>
    <h2 id="parcel-title"></h2>
    <p id="parcel-subtitle"></p>
    <dl id="parcel-fields"></dl>
    <h3>Sales</h3>
    <table id="sales"><thead><tr><th>Date</th><th>Price</th><th>Deed</th><th>Grantee</th></tr></thead><tbody></tbody></table>
    <h3>Tax delinquencies</h3>
    <table id="delinquencies"><thead><tr><th>Year</th><th>Status</th><th>Total due</th><th>Certificate</th></tr></thead><tbody></tbody></table>
  </section>
</main>
</body>
</html>
`;
}
