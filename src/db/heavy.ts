// Heavy requests: the ones whose database work grows with what the client asks for (large pages, facets, CSV and
// GeoJSON of a list). They run a few at a time per API process (HeavyGate), so they never hold every connection of
// the pool: a by-id lookup or any other light request beside them always finds one (docs/metering.md#in-flight).
import type { FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import { negotiate, type Format } from '../formats/negotiate.ts';

/** A page of more rows than this is heavy. */
export const HEAVY_ROWS = 100;

/**
 * Whether the request is heavy: a list (its route takes `limit`) asked for more than HEAVY_ROWS rows, for facets, or
 * in CSV or GeoJSON. Read from the query as sent (strings before validation, numbers after), so it gives the same
 * answer before the handler is chosen and after.
 */
export function isHeavy(request: FastifyRequest): boolean {
  const schema = request.routeOptions.schema?.querystring as { properties?: Record<string, unknown> } | undefined;
  if (schema?.properties?.limit === undefined) return false;
  const query = request.query as Record<string, unknown>;
  if (query.facets !== undefined || Number(query.limit) > HEAVY_ROWS) return true;
  const offered = request.routeOptions.config.formats;
  if (!offered || offered.length === 0) return false;
  return negotiate(query.format, request.headers.accept, ['json', ...offered] as Format[]) !== 'json';
}

/**
 * At most `size` heavy requests running at once; the others wait in arrival order. A request holds its place from
 * when it starts until its answer is done or abandoned; one abandoned while waiting never starts.
 */
export class HeavyGate {
  running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size: number) {}

  get queued() {
    return this.waiting.length;
  }

  /** Calls `start` once a place is free (at once if one is), and frees the place when `res` closes. */
  enter(res: ServerResponse, start: () => void): void {
    if (this.running < this.size) return this.run(res, start);
    const waiter = () => {
      res.off('close', drop);
      this.run(res, start);
    };
    const drop = () => {
      const i = this.waiting.indexOf(waiter);
      if (i >= 0) this.waiting.splice(i, 1);
    };
    res.once('close', drop);
    this.waiting.push(waiter);
  }

  private run(res: ServerResponse, start: () => void) {
    if (res.closed) return this.next();
    this.running++;
    res.once('close', this.leave);
    start();
  }

  private leave = () => {
    this.running--;
    this.next();
  };

  private next() {
    if (this.running < this.size) this.waiting.shift()?.();
  }
}

/** Heavy requests one process runs at once by default: each may hold two connections (a page and its facets), and
 * at least one connection of the pool is left for the rest. */
export const heavySlots = (poolSize: number) => Math.max(1, Math.floor((poolSize - 1) / 2));
