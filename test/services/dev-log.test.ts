// Development logs for a person (`make run`): readable lines from pino-pretty, a request on one line, and a mail the
// site could not send shown as its text with the link on a line of its own. Production keeps JSON lines.
import t from 'tap';
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import pino from 'pino';
import { developmentLogStream } from '../../src/dev-log.ts';
import { createMailer } from '../../src/site/mail.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { TEST_KEY_SECRET } from '../helpers/accounts.ts';
import { freePorts, spawnChild } from '../helpers/processes.ts';

t.setTimeout(600_000);

/** What pino wrote through the development stream, once it has flushed. */
async function written(log: (logger: pino.Logger) => unknown | Promise<unknown>): Promise<string> {
  const out = new PassThrough();
  let text = '';
  out.on('data', (chunk: Buffer) => (text += chunk));
  const logger = pino({ level: 'info' }, developmentLogStream(out));
  await log(logger);
  await new Promise((resolve) => setImmediate(resolve));
  return text;
}

t.test('a logged mail is its text, the link alone on its line', async (t) => {
  const link = 'http://127.0.0.1:3000/account/reset/confirm?token=AbC123_-x';
  const text = await written((logger) => {
    const mailer = createMailer({ from: 'x@localhost', production: false, log: logger });
    return mailer.send({
      to: 'dev@example.com',
      subject: 'Reset your password',
      text: `Follow this link:\n\n${link}\n\nBye`,
    });
  });
  t.match(text, /^\[\d\d:\d\d:\d\d\] INFO: mail not sent \(SMTP_URL is not set\)/, 'a readable line, not JSON');
  t.match(text, /^\s*To: dev@example\.com$/m);
  t.match(text, /^\s*Subject: Reset your password$/m);
  t.match(text, new RegExp(`^\\s*${link.replace(/[.?]/g, '\\$&')}$`, 'm'), 'the link on a line of its own');
  t.notMatch(text, /\\n/, 'no escaped newline');
});

t.test('a request is one line: method, path, status, time, request id', async (t) => {
  const text = await written((logger) => {
    logger.info({ reqId: 'req_1', req: { method: 'GET', url: '/v1/counties' } }, 'incoming request');
    logger.info({ reqId: 'req_1', res: { statusCode: 200 }, responseTime: 3.14 }, 'request completed');
  });
  const lines = text.trim().split('\n');
  t.equal(lines.length, 2, text);
  t.match(lines[0], /INFO: incoming request GET \/v1\/counties \(req_1\)$/);
  t.match(lines[1], /INFO: request completed 200 in 3\.1 ms \(req_1\)$/);
});

t.test('src/main.ts: readable lines in development, JSON lines in production', async (t) => {
  const db = await createTestDatabase();
  t.teardown(db.drop);
  const ports = await freePorts(2);
  const firstLine = async (NODE_ENV: string, port: number) => {
    const child = spawnChild(t, process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: {
        ...process.env,
        NODE_ENV,
        PORT: String(port),
        DATABASE_URL: db.ownerUrl,
        API_KEY_SECRET: TEST_KEY_SECRET,
        WEBHOOK_WORKER: 'false',
        REDIS_KEY_PREFIX: `test:devlog:${process.pid}:`,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk));
    while (!output.includes('Server listening')) {
      if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}: ${output}`);
      await Promise.race([once(child.stdout!, 'data'), once(child, 'exit')]);
    }
    child.kill('SIGTERM');
    return output.split('\n').find((l) => l.includes('Server listening'))!;
  };
  t.match(await firstLine('development', ports[0]!), /^\[\d\d:\d\d:\d\d\] INFO: Server listening at http:/);
  const json = JSON.parse(await firstLine('production', ports[1]!)) as { level: number; msg: string };
  t.match(json, { level: 30, msg: /^Server listening at http:/ });
});
