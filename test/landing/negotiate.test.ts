// Content negotiation at / and /status: HTML only when the Accept header prefers it strictly over JSON.
import t from 'tap';
import { prefersHtml } from '../../src/landing/negotiate.ts';

t.test('browsers get HTML; programs and ambiguous clients get JSON', async (t) => {
  const html = [
    'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8',
    'text/html',
    'text/*',
    'application/json;q=0.5, text/html',
  ];
  const json = [
    undefined,
    '',
    '*/*',
    'application/json',
    'application/json, text/html',
    'text/html;q=0.9, application/json',
    'text/html;q=0, */*',
    'application/*, text/html;q=0.5',
    'text/html;q=nonsense',
  ];
  for (const accept of html) t.ok(prefersHtml(accept), `HTML for ${accept}`);
  for (const accept of json) t.notOk(prefersHtml(accept), `JSON for ${String(accept)}`);
});
