// Heavy requests: the ones whose database work grows with what the client asks for (large pages, facets, CSV and
// GeoJSON of a list). Together they hold at most a share of each API process's pool (HeavyGate), never all of it: a
// by-id lookup or any other light request beside them always finds a connection (docs/metering.md#in-flight).
import type { FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import { negotiate, type Format } from '../formats/negotiate.ts';

/** A page of more rows than this is heavy. */
export const HEAVY_ROWS = 100;

/**
 * The connections a request holds at once if it is heavy, else 0: a list (its route takes `limit`) asked for facets
 * holds two (its page and its facets run side by side); one asked for more than HEAVY_ROWS rows, or in CSV or
 * GeoJSON, one. Read from the query as sent (strings before validation, numbers after), so it gives the same answer
 * before the handler is chosen and after.
 */
export function heavyConnections(request: FastifyRequest): number {
  const schema = request.routeOptions.schema?.querystring as { properties?: Record<string, unknown> } | undefined;
  if (schema?.properties?.limit === undefined) return 0;
  const query = request.query as Record<string, unknown>;
  if (query.facets !== undefined) return 2;
  if (Number(query.limit) > HEAVY_ROWS) return 1;
  const offered = request.routeOptions.config.formats;
  if (!offered || offered.length === 0) return 0;
  return negotiate(query.format, request.headers.accept, ['json', ...offered] as Format[]) === 'json' ? 0 : 1;
}

export const isHeavy = (request: FastifyRequest) => heavyConnections(request) > 0;

/**
 * Heavy requests holding at most `size` connections at once (one that needs more than `size` counts as `size`); the
 * others wait in arrival order. A request holds its connections from when it starts until its answer is done or
 * abandoned; one abandoned while waiting never starts.
 */
export class HeavyGate {
  /** Heavy requests running, and the connections they hold. */
  running = 0;
  held = 0;
  private readonly waiting: { n: number; go: () => void }[] = [];

  constructor(readonly size: number) {}

  get queued() {
    return this.waiting.length;
  }

  /** Calls `start` once `n` connections are free (at once if they are), and frees them when `res` closes. */
  enter(res: ServerResponse, n: number, start: () => void): void {
    const need = Math.min(n, this.size);
    if (this.waiting.length === 0 && this.held + need <= this.size) return this.run(res, need, start);
    const waiter = {
      n: need,
      go: () => {
        res.off('close', drop);
        this.run(res, need, start);
      },
    };
    const drop = () => {
      const i = this.waiting.indexOf(waiter);
      if (i >= 0) this.waiting.splice(i, 1);
      this.next();
    };
    res.once('close', drop);
    this.waiting.push(waiter);
  }

  private run(res: ServerResponse, n: number, start: () => void) {
    if (res.closed) return this.next();
    this.running++;
    this.held += n;
    res.once('close', () => {
      this.running--;
      this.held -= n;
      this.next();
    });
    start();
  }

  private next() {
    while (this.waiting.length > 0 && this.held + this.waiting[0]!.n <= this.size) this.waiting.shift()!.go();
  }
}

/** The connections heavy requests may hold at once by default: all of the pool but one, at least one. */
export const heavyShare = (poolSize: number) => Math.max(1, poolSize - 1);
