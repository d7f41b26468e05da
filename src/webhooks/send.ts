// One delivery attempt: POST the event's JSON with the Standard Webhooks headers, signed with the `standardwebhooks`
// library (with the new and the previous secret during a rotation's overlap). A 2xx answer within the timeout is
// delivered; anything else (another status, a redirect, which is never followed, a refused address, a connection
// error, the timeout) is a failed attempt with its reason.
import http from 'node:http';
import https from 'node:https';
import { Webhook } from 'standardwebhooks';
import { REFUSED_ATTEMPT, RefusedTarget, addressRefusal, safeLookup, type TargetPolicy } from './ssrf.ts';

export interface Signer {
  /** `v1,<base64>` for each secret that signs, space-separated. */
  sign: (id: string, at: Date, body: string) => string;
}

/** Signs with the current secret and, when given (during a rotation's overlap), the previous one too. */
export function signer(secret: string, previous: string | null): Signer {
  const keys = [new Webhook(secret), ...(previous ? [new Webhook(previous)] : [])];
  return { sign: (id, at, body) => keys.map((k) => k.sign(id, at, body)).join(' ') };
}

/** The event as sent, byte for byte the same on every attempt: data and previous are the stored JSON text. */
export function eventBody(e: {
  event_id: string;
  type: string;
  created_at: string;
  data: string;
  previous: string | null;
}) {
  const head = `{"id":${JSON.stringify(e.event_id)},"type":${JSON.stringify(e.type)},"created_at":${JSON.stringify(e.created_at)}`;
  return `${head},"data":${e.data}${e.previous === null ? '' : `,"previous":${e.previous}`}}`;
}

export interface AttemptResult {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  attemptedAt: Date;
  durationMs: number;
}

/** How much of an answer's body is read (and thrown away) before the connection is closed instead. */
const MAX_ANSWER_BYTES = 64 * 1024;

export class Sender {
  private readonly agents: { http: http.Agent; https: https.Agent };
  private readonly lookup;

  constructor(
    private readonly policy: TargetPolicy,
    private readonly timeoutMs: number,
  ) {
    this.lookup = safeLookup(policy);
    const options = { keepAlive: true, keepAliveMsecs: 10_000, maxFreeSockets: 4, timeout: 30_000 };
    this.agents = { http: new http.Agent(options), https: new https.Agent(options) };
  }

  close() {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  /** One POST; never throws. */
  async post(url: string, headers: Record<string, string>, body: string): Promise<AttemptResult> {
    const attemptedAt = new Date();
    const started = performance.now();
    const done = (r: Omit<AttemptResult, 'attemptedAt' | 'durationMs'>): AttemptResult => ({
      ...r,
      attemptedAt,
      durationMs: Math.round(performance.now() - started),
    });
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return done({ ok: false, statusCode: null, error: 'the URL does not parse' });
    }
    const https_ = u.protocol === 'https:';
    if (!https_ && !(u.protocol === 'http:' && this.policy.allowLoopback)) {
      return done({ ok: false, statusCode: null, error: `refused: ${u.protocol}// targets are not allowed` });
    }
    const literal = u.hostname.replace(/^\[|\]$/g, '');
    const why = /^[\d.]+$|:/.test(literal) ? addressRefusal(literal, this.policy) : null;
    if (why && why !== 'not an IP address') return done({ ok: false, statusCode: null, error: REFUSED_ATTEMPT });
    const payload = Buffer.from(body);
    return new Promise<AttemptResult>((resolve) => {
      let settled = false;
      const finish = (r: Omit<AttemptResult, 'attemptedAt' | 'durationMs'>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(done(r));
      };
      const req = (https_ ? https : http).request(u, {
        method: 'POST',
        agent: https_ ? this.agents.https : this.agents.http,
        lookup: this.lookup,
        headers: {
          'content-type': 'application/json',
          'content-length': payload.length,
          'user-agent': 'florida-property-webhooks/1',
          ...headers,
        },
      });
      const timer = setTimeout(() => {
        finish({ ok: false, statusCode: null, error: `timed out after ${this.timeoutMs} ms` });
        req.destroy();
      }, this.timeoutMs);
      req.on('error', (err: NodeJS.ErrnoException) => {
        const message = err instanceof RefusedTarget ? err.message : `${err.code ? `${err.code}: ` : ''}${err.message}`;
        finish({ ok: false, statusCode: null, error: message });
      });
      req.on('response', (res) => {
        // the status decides; the body is read and thrown away (so the connection can be reused), within bounds
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) finish({ ok: true, statusCode: status, error: null });
        else if (status >= 300 && status < 400)
          finish({ ok: false, statusCode: status, error: `HTTP ${status}: redirects are not followed` });
        else finish({ ok: false, statusCode: status, error: `HTTP ${status}` });
        let read = 0;
        const cut = setTimeout(() => res.destroy(), this.timeoutMs);
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES) res.destroy();
        });
        res.on('close', () => clearTimeout(cut));
        res.on('error', () => {});
      });
      req.end(payload);
    });
  }
}
