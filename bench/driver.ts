// A closed-loop load driver: `concurrency` workers on keep-alive connections cycle through a list of paths for a
// fixed time, recording every latency, so percentiles (p50/p95/p99) are exact rather than bucketed.
import { Pool } from 'undici';

export interface DriveResult {
  requests: number;
  non2xx: number;
  errors: number;
  seconds: number;
  rps: number;
  p50: number;
  p95: number;
  p99: number;
  statuses: Record<string, number>;
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

export async function drive(opts: {
  base: string;
  paths: string[];
  headers?: Record<string, string>;
  concurrency: number;
  seconds: number;
  /** Stop sooner, once this many requests have been sent (a warm-up pass over the paths: `paths.length`). */
  requests?: number;
}): Promise<DriveResult> {
  const pool = new Pool(opts.base, { connections: opts.concurrency, pipelining: 1 });
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  let next = 0;
  const started = performance.now();
  const deadline = started + opts.seconds * 1000;
  const worker = async () => {
    while (performance.now() < deadline && next < (opts.requests ?? Infinity)) {
      const path = opts.paths[next++ % opts.paths.length]!;
      const t0 = performance.now();
      try {
        const res = await pool.request({ path, method: 'GET', headers: opts.headers });
        await res.body.dump();
        latencies.push(performance.now() - t0);
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  latencies.sort((a, b) => a - b);
  const non2xx = Object.entries(statuses)
    .filter(([s]) => !s.startsWith('2'))
    .reduce((n, [, c]) => n + c, 0);
  return {
    requests: latencies.length,
    non2xx,
    errors,
    seconds,
    rps: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    p99: percentile(latencies, 99),
    statuses,
  };
}
