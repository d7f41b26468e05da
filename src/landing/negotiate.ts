// Which representation a request asks for, between a page for people and JSON for programs. A browser's Accept names
// text/html; a program's names JSON, */* or nothing. HTML only when text/html is preferred strictly over JSON, so an
// ambiguous client keeps getting JSON, as the API always answered.

function quality(accept: string, type: string): number {
  const [major] = type.split('/');
  let best = -1;
  let q = 0;
  for (const range of accept.split(',')) {
    const [media = '', ...params] = range.trim().toLowerCase().split(';');
    const specificity = media === type ? 2 : media === `${major}/*` ? 1 : media === '*/*' ? 0 : -1;
    if (specificity <= best) continue;
    best = specificity;
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = qParam ? Number(qParam.slice(2)) : 1;
    q = Number.isFinite(value) ? Math.min(Math.max(value, 0), 1) : 0;
  }
  return q;
}

/** True when the Accept header prefers text/html to application/json. */
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  return quality(accept, 'text/html') > quality(accept, 'application/json');
}
