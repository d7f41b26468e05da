// Other representations of the answers of the routes that opt in with `config: { formats: [...] }`: CSV of a list
// (`format=csv` or `Accept: text/csv`; plans with the CSV feature) and GeoJSON of parcels (`format=geojson` or
// `Accept: application/geo+json`). A route's handler is unchanged: it returns its JSON answer ({ data, pagination }),
// and the answer is written in the format asked for. The route keeps its filters, bounds, credit and rate-limit
// headers; errors stay JSON in the envelope. docs/formats.md describes the formats.
import fp from 'fastify-plugin';
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  RouteHandlerMethod,
  RouteOptions,
  onSendHookHandler,
  preHandlerAsyncHookHandler,
} from 'fastify';
import { notFound } from '../errors.ts';
import { requirePlanFeature } from '../plan-features.ts';
import { getParcelFeatures } from '../queries/tiles.ts';
import { StringEnum, type Page } from '../schemas/common.ts';
import { csvColumns, csvStream } from './csv.ts';
import { attachment, pageLinks } from './headers.ts';
import { MEDIA_TYPES, negotiate, type AltFormat, type Format } from './negotiate.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Representations the route offers besides JSON (src/formats/plugin.ts): 'csv' where `data` is a list of objects,
     * 'geojson' where `data` holds parcels (ParcelHit: their `id` is read).
     */
    formats?: readonly AltFormat[];
  }
  interface FastifyRequest {
    /** The representation the answer is written in, chosen before the handler runs. */
    responseFormat: Format;
  }
}

/** What an opted-in route's handler returns: a list answer, or one object (one parcel). */
interface Answer {
  data: Record<string, unknown>[] | Record<string, unknown>;
  pagination?: Page;
}

/** Headers that describe a download or a page of it, dropped again when the answer turns out not to be a 2xx. */
const DOWNLOAD_HEADERS = ['content-disposition', 'x-total-count', 'link'];

const asArray = <T>(hooks: T | T[] | undefined): T[] =>
  hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];

/** The route's schema with the `format` parameter and a response description that names the formats. */
function withFormatParam(schema: RouteOptions['schema'], offered: readonly Format[]): RouteOptions['schema'] {
  const s = (schema ?? {}) as Record<string, unknown> & {
    querystring?: { type?: string; properties?: Record<string, unknown> };
    response?: Record<string, Record<string, unknown>>;
  };
  const query = s.querystring ?? { type: 'object', properties: {} };
  const alternatives = offered
    .filter((f) => f !== 'json')
    .map((f) => `format=${f} or Accept: ${MEDIA_TYPES[f]}`)
    .join('; ');
  const format = StringEnum(
    offered,
    `Response format: json (default)${offered.includes('csv') ? '; csv (text/csv, plans with CSV: Pro and up)' : ''}` +
      `${offered.includes('geojson') ? '; geojson (application/geo+json)' : ''}. Wins over the Accept header.`,
  );
  const ok = s.response?.['200'];
  return {
    ...s,
    querystring: { ...query, properties: { ...query.properties, format } },
    ...(ok && {
      response: {
        ...s.response,
        200: {
          ...ok,
          description: `JSON by default; ${alternatives} (see docs/formats.md). Errors are always JSON.`,
        },
      },
    }),
  };
}

export default fp(
  async (app: FastifyInstance) => {
    app.decorateRequest('responseFormat', 'json');

    /** The FeatureCollection of a page of parcels, or the Feature of one parcel, written by api.parcel_features. */
    async function geojson(answer: Answer): Promise<string> {
      if (Array.isArray(answer.data)) {
        const features = await getParcelFeatures(
          app.sql,
          answer.data.map((hit) => hit.id as number),
        );
        return `{"type":"FeatureCollection","features":[${features.join(',')}]}`;
      }
      const id = answer.data.id as number;
      const [feature] = await getParcelFeatures(app.sql, [id]);
      if (!feature) throw notFound(`No parcel with id ${id}.`);
      return feature;
    }

    app.addHook('onRoute', (route: RouteOptions) => {
      const formats = route.config?.formats;
      if (!formats || formats.length === 0) return;
      const offered: Format[] = ['json', ...formats];
      const response = (route.schema?.response as Record<string, unknown> | undefined)?.['200'];
      const columns = formats.includes('csv') ? csvColumns(response) : undefined;
      if (formats.includes('csv') && !columns) {
        throw new Error(`${route.method} ${route.url}: CSV needs a 200 response whose data is a list of objects`);
      }
      route.schema = withFormatParam(route.schema, offered);

      const choose: preHandlerAsyncHookHandler = async (request) => {
        const format = negotiate((request.query as { format?: unknown }).format, request.headers.accept, offered);
        request.responseFormat = format;
        if (format === 'csv') await requirePlanFeature(request, 'csv');
      };

      const handler = route.handler;
      route.handler = async function (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
        const answer = (await handler.call(this, request, reply)) as Answer;
        const format = request.responseFormat;
        if (format === 'json' || reply.sent) return answer;
        const list = Array.isArray(answer.data) ? answer.data : undefined;
        if (list) {
          reply.header('X-Total-Count', answer.pagination?.total ?? list.length);
          const links = answer.pagination && pageLinks(request.url, answer.pagination);
          if (links) reply.header('Link', links);
        }
        if (format === 'csv') {
          reply.header('Content-Type', `${MEDIA_TYPES.csv}; charset=utf-8`);
          reply.header('Content-Disposition', attachment(request.url, 'csv'));
          return csvStream(list ?? [answer.data as Record<string, unknown>], columns!);
        }
        const body = await geojson(answer);
        reply.header('Content-Type', MEDIA_TYPES.geojson);
        return Buffer.from(body); // (a string would get a charset parameter, which application/geo+json does not define)
      } as RouteHandlerMethod;

      // Runs after the scope's onSend hooks (route hooks come last), so after a refusal by the metering has replaced
      // the answer: a refusal keeps no download headers.
      const finishHeaders: onSendHookHandler = (_request, reply, payload, done) => {
        const previous = reply.getHeader('vary');
        if (!previous) reply.header('Vary', 'Accept');
        else if (!/\baccept\b/i.test(String(previous))) reply.header('Vary', `${String(previous)}, Accept`);
        if (reply.statusCode < 200 || reply.statusCode > 299) {
          for (const name of DOWNLOAD_HEADERS) reply.removeHeader(name);
        }
        done(null, payload);
      };

      route.preHandler = [...asArray(route.preHandler), choose];
      route.onSend = [...asArray(route.onSend), finishHeaders];
    });
  },
  { name: 'formats', dependencies: ['db'] },
);
