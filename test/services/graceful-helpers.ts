// For the graceful-restart tests: the API as its own OS process (test/services/graceful-server.ts), its JSON log
// lines, and a client that keeps N keep-alive connections busy and tells failed requests (sent, never fully
// answered) from refused connections (nothing was sent).
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type postgres from 'postgres';
import { TEST_KEY_SECRET } from '../helpers/accounts.ts';
import { freePorts, spawnChild } from '../helpers/processes.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

export interface LogLine {
  msg?: string;
  pid?: number;
  component?: string;
  [key: string]: unknown;
}

export interface ApiProcess {
  child: ChildProcess;
  port: number;
  /** Every JSON line the process (and its workers) wrote on stdout, in order. */
  lines: LogLine[];
  /** Everything written, for failure messages. */
  output: () => string;
  /** Resolves with the first line (already written or still to come) that `match` accepts. */
  waitFor: (match: (l: LogLine) => boolean, what: string, timeoutMs?: number) => Promise<LogLine>;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
}

/**
 * Starts the API process on a free port; resolves once `listeners` of its processes listen. It and its workers are
 * stopped when the test ends, however it ends (helpers/processes.ts).
 */
export async function startApi(
  t: { teardown: (fn: () => unknown) => void },
  env: Record<string, string>,
  listeners = 1,
): Promise<ApiProcess> {
  const [port] = (await freePorts(1)) as [number];
  const child = spawnChild(t, process.execPath, ['--import', 'tsx', 'test/services/graceful-server.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      PORT: String(port),
      API_KEY_SECRET: TEST_KEY_SECRET,
      DATABASE_POOL_SIZE: '2',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const lines: LogLine[] = [];
  let text = '';
  let partial = '';
  const waiters: { match: (l: LogLine) => boolean; resolve: (l: LogLine) => void }[] = [];
  child.stdout!.on('data', (chunk: Buffer) => {
    text += chunk.toString();
    partial += chunk.toString();
    const parts = partial.split('\n');
    partial = parts.pop()!;
    for (const part of parts) {
      let line: LogLine;
      try {
        line = JSON.parse(part) as LogLine;
      } catch {
        continue;
      }
      lines.push(line);
      for (const w of [...waiters]) {
        if (w.match(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  // generous: starting an API process takes over a minute on a loaded machine
  const waitFor = (match: (l: LogLine) => boolean, what: string, timeoutMs = 300_000) => {
    const found = lines.find(match);
    if (found) return Promise.resolve(found);
    return new Promise<LogLine>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no log line: ${what}\n${text}`)), timeoutMs);
      waiters.push({
        match,
        resolve: (l) => {
          clearTimeout(timer);
          resolve(l);
        },
      });
      void exited.then((code) => reject(new Error(`exited ${code} before: ${what}\n${text}`)));
    });
  };
  const api: ApiProcess = { child, port, lines, output: () => text, waitFor, exited };
  for (let i = 1; i <= listeners; i++) {
    await waitFor(() => listeningPids(api).length >= i, `${i} processes listening`);
  }
  return api;
}

/** The pids of the processes that logged "Server listening", in order. */
export function listeningPids(api: ApiProcess): number[] {
  return [...new Set(api.lines.filter((l) => l.msg?.startsWith('Server listening') && l.pid).map((l) => l.pid!))];
}

export interface Answer {
  path: string;
  status: number;
  body: string;
  /** When the answer was complete (Date.now()). */
  at: number;
}

/**
 * Keeps `connections` keep-alive connections busy with `paths(i)` (loop i) until stop(). A request that was sent and
 * not answered in full is a failure; a connection refused (nothing sent) is counted apart.
 */
export class Load {
  readonly answers: Answer[] = [];
  readonly failures: string[] = [];
  refused = 0;
  private stopped = false;
  private readonly agent: http.Agent;
  private loops: Promise<void>[] = [];

  constructor(
    private readonly port: number,
    private readonly headers: Record<string, string>,
    connections: number,
    paths: (loop: number, n: number) => string,
    private readonly pauseMs = 0,
  ) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets: connections });
    for (let i = 0; i < connections; i++) this.loops.push(this.loop(i, paths));
  }

  private async loop(i: number, paths: (loop: number, n: number) => string) {
    for (let n = 0; !this.stopped; n++) {
      const outcome = await this.send(paths(i, n));
      if (outcome === 'refused') await sleep(20);
      else if (this.pauseMs > 0) await sleep(this.pauseMs);
    }
  }

  /** One request: its answer is recorded, or the failure, or 'refused'. */
  send(path: string): Promise<'answered' | 'failed' | 'refused'> {
    return new Promise((resolve) => {
      let settled = false;
      const settle = (outcome: 'answered' | 'failed' | 'refused', failure?: string) => {
        if (settled) return;
        settled = true;
        if (failure) this.failures.push(failure);
        resolve(outcome);
      };
      const req = http.get({ host: '127.0.0.1', port: this.port, path, agent: this.agent, headers: this.headers });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          this.answers.push({ path, status: res.statusCode!, body: Buffer.concat(chunks).toString(), at: Date.now() });
          settle('answered');
        });
        res.on('error', (err) => settle('failed', `${path}: answer cut (${err.message})`));
        res.on('close', () => settle('failed', `${path}: answer cut (status ${res.statusCode})`));
      });
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (err.code === 'ECONNREFUSED') {
          this.refused++;
          settle('refused');
        } else settle('failed', `${path}: ${err.code ?? err.message} (reused connection: ${req.reusedSocket})`);
      });
    });
  }

  /** Answers with each status. */
  statuses(): Record<number, number> {
    const out: Record<number, number> = {};
    for (const a of this.answers) out[a.status] = (out[a.status] ?? 0) + 1;
    return out;
  }

  async waitForAnswers(n: number, timeoutMs = 300_000) {
    const until = Date.now() + timeoutMs;
    while (this.answers.length < n) {
      if (Date.now() > until) throw new Error(`only ${this.answers.length} answers: ${this.failures.join('; ')}`);
      await sleep(10);
    }
  }

  async stop() {
    this.stopped = true;
    await Promise.all(this.loops);
    this.agent.destroy();
  }
}

/** The client's charged requests in Postgres (usage_daily) and the credits its ledger debited for usage. */
export async function recordedUsage(sql: postgres.Sql, clientId: string) {
  const [row] = await sql<{ requests: number; debited: number }[]>`
    SELECT (SELECT coalesce(sum(requests), 0)::int FROM meter.usage_daily WHERE client_id = ${clientId}) AS requests,
           (SELECT coalesce(-sum(delta), 0)::int FROM meter.ledger
             WHERE client_id = ${clientId} AND reason = 'usage') AS debited`;
  return row!;
}
