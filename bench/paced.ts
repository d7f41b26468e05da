// An open-loop, paced load generator: requests go out at a fixed rate, evenly spaced (not in bursts), over a few
// keep-alive connections, whatever the answers' latency, so a server sees the same arrivals whatever it costs. It
// runs in a process of its own (this file, run as a script), so it does not share an event loop or a CPU count with
// the process measured. bench/api-cost.ts uses it: CPU per request at a moderate rate is what a wake-up of the
// server's event loop costs, which a saturating load (many requests read per wake-up) hides.
//   node --import tsx bench/paced.ts <json options>   (prints one JSON result line)
import { execFile } from 'node:child_process';
import { Agent, request } from 'node:http';
import { promisify } from 'node:util';

export interface PacedOptions {
  /** Full URLs, sent in turn. */
  urls: string[];
  rate: number;
  seconds: number;
  connections: number;
  headers?: Record<string, string>;
}

export interface PacedResult {
  sent: number;
  answered: number;
  non2xx: number;
  errors: number;
  p50: number;
  p99: number;
}

const run = promisify(execFile);

/** Runs the paced client in a child process; resolves with its result. */
export async function paced(opts: PacedOptions): Promise<PacedResult> {
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', new URL(import.meta.url).pathname, JSON.stringify(opts)],
    {
      maxBuffer: 1 << 20,
    },
  );
  return JSON.parse(stdout) as PacedResult;
}

async function main(opts: PacedOptions): Promise<PacedResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: opts.connections });
  const intervalMs = 1000 / opts.rate;
  const total = Math.round(opts.rate * opts.seconds);
  const latencies: number[] = [];
  let sent = 0;
  let non2xx = 0;
  let errors = 0;
  let pending = 0;
  let finish: () => void = () => {};
  const done = new Promise<void>((resolve) => (finish = resolve));
  const settle = () => {
    pending--;
    if (sent === total && pending === 0) finish();
  };
  const send = () => {
    const url = opts.urls[sent % opts.urls.length]!;
    sent++;
    pending++;
    const t0 = performance.now();
    const req = request(url, { agent, headers: opts.headers }, (res) => {
      if (res.statusCode! < 200 || res.statusCode! >= 300) non2xx++;
      res.resume();
      res.on('end', () => {
        latencies.push(performance.now() - t0);
        settle();
      });
    });
    req.on('error', () => {
      errors++;
      settle();
    });
    req.end();
  };
  const started = performance.now();
  // each tick sends every request due by now, then sleeps until the next one is due
  const tick = () => {
    const due = Math.min(total, Math.floor((performance.now() - started) / intervalMs) + 1);
    while (sent < due) send();
    if (sent < total) setTimeout(tick, Math.max(0, started + sent * intervalMs - performance.now()));
  };
  tick();
  await done;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
  return { sent, answered: latencies.length, non2xx, errors, p50: at(0.5), p99: at(0.99) };
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const result = await main(JSON.parse(process.argv[2]!) as PacedOptions);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
