// Deprecation of an operation (docs/api.md#versioning): a route declares `config: { deprecation: { since, sunset,
// successor? } }`, and then the OpenAPI document marks it deprecated and every answer it gives carries
// `Deprecation: @<unix seconds>` (RFC 9745), `Sunset: <HTTP-date>` (RFC 8594) and a `Link` to the policy
// (rel="deprecation") and to its successor (rel="successor-version"). Registered before the routes and the docs.
import fp from 'fastify-plugin';
import type { onSendHookHandler } from 'fastify';

export interface Deprecation {
  /** When the operation was deprecated, YYYY-MM-DD (UTC). */
  since: string;
  /** The first day it may stop answering, YYYY-MM-DD (UTC); at least 6 months after `since`. */
  sunset: string;
  /** The path of what replaces it, if anything does. */
  successor?: string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    deprecation?: Deprecation;
  }
}

export const POLICY_URL = '/docs/guides/versioning';

const day = (iso: string, what: string) => {
  const at = new Date(`${iso}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(iso) || Number.isNaN(at.getTime())) {
    throw new Error(`deprecation ${what} must be a date YYYY-MM-DD, not ${JSON.stringify(iso)}`);
  }
  return at;
};

/** The three headers of a deprecated operation. */
export function deprecationHeaders(d: Deprecation): Record<string, string> {
  const since = day(d.since, 'since');
  const sunset = day(d.sunset, 'sunset');
  if (sunset <= since) throw new Error(`deprecation sunset ${d.sunset} must follow since ${d.since}`);
  const links = [`<${POLICY_URL}>; rel="deprecation"; type="text/html"`];
  if (d.successor) links.push(`<${d.successor}>; rel="successor-version"`);
  return {
    Deprecation: `@${since.getTime() / 1000}`,
    Sunset: sunset.toUTCString(),
    Link: links.join(', '),
  };
}

export default fp(
  async (app) => {
    app.addHook('onRoute', (route) => {
      const deprecation = route.config?.deprecation;
      if (!deprecation) return;
      const headers = deprecationHeaders(deprecation); // a bad date fails at start, not on a request
      if (route.schema) {
        const schema = route.schema as { deprecated?: boolean; description?: string };
        schema.deprecated = true;
        const note =
          `**Deprecated** since ${deprecation.since}; may stop answering after ${deprecation.sunset}` +
          (deprecation.successor ? `: use \`${deprecation.successor}\` instead.` : '.');
        schema.description = schema.description ? `${note}\n\n${schema.description}` : note;
      }
      const mark: onSendHookHandler = (_request, reply, payload, done) => {
        for (const [name, value] of Object.entries(headers)) {
          const existing = name === 'Link' ? reply.getHeader('Link') : undefined;
          reply.header(name, existing ? `${String(existing)}, ${value}` : value);
        }
        done(null, payload);
      };
      const own = route.onSend;
      route.onSend = own ? [...(Array.isArray(own) ? own : [own]), mark] : [mark];
    });
  },
  { name: 'deprecation' },
);
