// The request log's collection: every answer to a known key is kept in this process's memory (one small object, no
// I/O) and recorded in Postgres once a second by one call of meter.record_requests on the metering's own connection,
// like the usage flush; the rest is on close. A process that dies loses at most its last second of log rows (charged
// usage is counted apart, through Redis, and loses nothing).
import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Sql } from '../plugins/db.ts';
import { errorCodeOf, rowOf, type RequestLogRow } from './entry.ts';

declare module 'fastify' {
  interface FastifyInstance {
    requestLog: RequestLog;
  }
  interface FastifyRequest {
    /** The error envelope's code of the answer, for the request log. */
    loggedErrorCode: string | null;
  }
}

const FLUSH_MS = 1000;
/** Rows recorded in one call. */
const ROWS_PER_CALL = 5000;
/** Rows kept while Postgres does not answer; newer ones are dropped beyond it (and counted). */
const MAX_WAITING = 100_000;

export class RequestLog {
  private rows: RequestLogRow[] = [];
  private running: Promise<number> | null = null;
  /** Rows dropped because Postgres was away too long. */
  dropped = 0;

  constructor(private readonly sql: Sql) {}

  /** Keeps an answered request of a known key for the next flush. */
  record(request: FastifyRequest, reply: FastifyReply) {
    const row = rowOf(request, reply, request.loggedErrorCode);
    if (!row) return;
    if (this.rows.length >= MAX_WAITING) this.dropped++;
    else this.rows.push(row);
  }

  get waiting() {
    return this.rows.length;
  }

  /** Records every row kept so far (a flush running already is waited for first); returns the rows recorded. */
  async flush(now?: Date): Promise<number> {
    while (this.running) await this.running.catch(() => 0);
    this.running = this.flushOnce(now).finally(() => (this.running = null));
    return this.running;
  }

  /**
   * Records the rows kept before it started, ROWS_PER_CALL a call; rows kept meanwhile wait for the next flush, so that
   * under load a flush is one call a second, not a loop of small calls each paying for the trim.
   */
  private async flushOnce(now?: Date): Promise<number> {
    const pending = this.rows;
    this.rows = [];
    let recorded = 0;
    for (let i = 0; i < pending.length; i += ROWS_PER_CALL) {
      const batch = pending.slice(i, i + ROWS_PER_CALL);
      try {
        const [row] = await this.sql<{ n: number }[]>`
          SELECT meter.record_requests(${this.sql.json(batch as never)}, ${now ?? new Date()}) AS n`;
        recorded += row?.n ?? 0;
      } catch (err) {
        // sent again by the next flush, oldest first, within the bound
        this.rows = pending.slice(i).concat(this.rows).slice(0, MAX_WAITING);
        throw err;
      }
    }
    return recorded;
  }
}

async function requestLog(app: import('fastify').FastifyInstance) {
  const log = new RequestLog(app.meterSql);
  app.decorate('requestLog', log);
  app.decorateRequest('loggedErrorCode', null);
  // callback hooks: no promise per request for work that never waits
  app.addHook('onSend', (request, reply, payload, done) => {
    if (reply.statusCode >= 400 && request.auth) request.loggedErrorCode = errorCodeOf(payload);
    done(null, payload);
  });
  app.addHook('onResponse', (request, reply, done) => {
    log.record(request, reply);
    done();
  });
  const timer = setInterval(() => {
    log.flush().catch((err: Error) => app.log.warn({ err: err.message }, 'request log flush failed; will retry'));
  }, FLUSH_MS);
  timer.unref();
  app.addHook('onClose', async () => {
    clearInterval(timer);
    await log.flush().catch((err: Error) => app.log.error({ err: err.message }, 'final request log flush failed'));
    if (log.dropped > 0) app.log.error({ dropped: log.dropped }, 'request log rows dropped while Postgres was away');
  });
}

export default fp(requestLog, { name: 'request-log', dependencies: ['db', 'auth'] });
