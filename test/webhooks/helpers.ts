// Webhook tests: real HTTP receivers on loopback, delivery workers on the test database (as api_webhooks), and the
// management API called with a client's key.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import { loadConfig } from '../../src/config.ts';
import { withRole } from '../../src/db-url.ts';
import { webhookSettings, type WebhookSettings } from '../../src/webhooks/settings.ts';
import { WebhookWorker, type WorkerLog } from '../../src/webhooks/worker.ts';
import { TEST_KEY_SECRET } from '../helpers/accounts.ts';
import type { TestContext } from '../helpers/app.ts';
import type { TestDatabase } from '../helpers/db.ts';

interface Teardown {
  teardown: (fn: () => unknown) => void;
}

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/** What the receiver answers a request with: a status (default 200), after a delay, or never (hang). */
export type Answer = { status?: number; delayMs?: number; hang?: boolean; headers?: Record<string, string> };

export interface Receiver {
  url: string;
  port: number;
  requests: Received[];
  /** Decides each answer; the default answers 200 at once. */
  answer: (req: Received, n: number) => Answer;
  /** The parsed bodies received so far. */
  events: () => { id: string; type: string; created_at: string; data: Record<string, unknown>; previous?: object }[];
  close: () => Promise<void>;
}

/** An HTTP server on 127.0.0.1 that records every request (headers and raw body). */
export async function receiver(t: Teardown, answer?: Receiver['answer']): Promise<Receiver> {
  const requests: Received[] = [];
  const hanging = new Set<http.ServerResponse>();
  const r: Receiver = {
    url: '',
    port: 0,
    requests,
    answer: answer ?? (() => ({})),
    events: () => requests.map((q) => JSON.parse(q.body)),
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const got = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      requests.push(got);
      const a = r.answer(got, requests.length);
      if (a.hang) {
        hanging.add(res);
        return;
      }
      setTimeout(() => {
        res.writeHead(a.status ?? 200, a.headers ?? {});
        res.end('ok');
      }, a.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  r.port = (server.address() as AddressInfo).port;
  r.url = `http://127.0.0.1:${r.port}/hook`;
  t.teardown(() => r.close());
  return r;
}

/** Short schedules so that retries, timeouts and leases run out within a test. */
export const FAST = {
  WEBHOOK_ALLOW_LOOPBACK: 'true',
  WEBHOOK_RETRY_SCHEDULE: '0.2,0.2,0.2',
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_SWEEP_MS: '200',
  WEBHOOK_WORKER: 'false',
};

export function settingsFor(db: TestDatabase, env: Record<string, string> = {}): WebhookSettings {
  return webhookSettings(
    loadConfig({
      ...process.env,
      NODE_ENV: 'test',
      API_DATABASE_URL: db.apiUrl,
      API_KEY_SECRET: TEST_KEY_SECRET,
      ...FAST,
      ...env,
    }),
  );
}

export const quietLog: WorkerLog = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** A delivery worker on the test database (as api_webhooks), stopped at teardown. */
export async function startWorker(t: Teardown, db: TestDatabase, env: Record<string, string> = {}, log = quietLog) {
  const w = await WebhookWorker.start(settingsFor(db, env), log);
  let stopped = false;
  t.teardown(async () => {
    if (!stopped) await w.stop();
  });
  return {
    worker: w,
    stop: async () => {
      stopped = true;
      await w.stop();
    },
  };
}

export const webhooksUrl = (db: TestDatabase) => withRole(db.ownerUrl, 'api_webhooks');

/**
 * Polls until `check` returns a truthy value (then returns it), or fails after `ms`: generous, it only stops a hang
 * (a loaded machine runs a schedule of seconds many times slower).
 */
export async function waitFor<T>(what: string, check: () => Promise<T> | T, ms = 120_000): Promise<NonNullable<T>> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The management API with a key: JSON in, the response out. */
export function api(ctx: TestContext, key = ctx.key) {
  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) =>
    ctx.app.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { payload: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
  return {
    get: (url: string) => call('GET', url),
    post: (url: string, body?: unknown) => call('POST', url, body),
    patch: (url: string, body: unknown) => call('PATCH', url, body),
    del: (url: string) => call('DELETE', url),
    /** Registers an endpoint and returns its data (with the secret); fails the test on anything but 201. */
    create: async (body: Record<string, unknown>) => {
      const res = await call('POST', '/v1/webhooks', body);
      if (res.statusCode !== 201) throw new Error(`create: ${res.statusCode} ${res.body}`);
      return res.json().data as { id: string; secret: string; [k: string]: unknown };
    },
  };
}

export const ALL_EVENTS = [
  'tax_delinquency.created',
  'tax_delinquency.updated',
  'tax_delinquency.removed',
  'parcel.sale_recorded',
  'parcel.owner_changed',
  'county.data_refreshed',
];

export type Res = LightMyRequestResponse;

/**
 * Imports a small standard-format delinquency list for Liberty: `n` new records of one tax year (a year of their
 * own, so nothing else is replaced), through the real importer. Returns the load's summary.
 */
export async function importLiberty(db: TestDatabase, year: number, n: number, opts: { status?: string } = {}) {
  const { writeFileSync, mkdtempSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { tmpdir } = await import('node:os');
  const { importDelinquencies, STANDARD_COLUMNS } = await import('../../src/importers/delinquencies.ts');
  const dir = mkdtempSync(join(tmpdir(), 'webhooks-'));
  const file = join(dir, `liberty-${year}.csv`);
  const rows = Array.from({ length: n }, (_, i) =>
    [
      'liberty',
      `WH-${year}-${String(i).padStart(5, '0')}`,
      year,
      opts.status ?? 'delinquent',
      (100 + i).toFixed(2),
      (120 + i).toFixed(2),
      `C${year}-${i}`,
      '',
      `OWNER ${i}`,
      `${i} MAIN ST`,
      'TaxCertSale',
      '',
      '',
      '',
      '',
    ].join(','),
  );
  writeFileSync(file, [STANDARD_COLUMNS.join(','), ...rows].join('\n') + '\n');
  return importDelinquencies({ file, databaseUrl: db.ownerUrl, rejects: join(dir, 'rejects.csv'), quiet: true });
}
