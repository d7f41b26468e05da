// `admin client invite` (a link to set an account-site password for a client the operator made) and mail over
// SMTP_URL: the CLI prints the link without SMTP_URL and mails it with one; the site mails its links over SMTP and
// then writes none of them to the log. The SMTP server is a small local sink that records what it is sent.
import t from 'tap';
import net from 'node:net';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { buildTestApp } from '../helpers/app.ts';
import { TEST_KEY_SECRET } from '../helpers/accounts.ts';
import { Agent, signUp, textOf, uniqueEmail } from './helpers.ts';

/** Set here, for the app and the CLI alike, so that the caller's PORT, HOST or SITE_URL does not change the links. */
const SITE_URL = 'http://site.example.test:8080';
/** SITE_URL as a regular expression's text. */
const SITE = SITE_URL.replace(/[.]/g, '\\.');
// five CLI processes one after another, each starting Node and tsx: minutes on a loaded machine, not the default two
t.setTimeout(600_000);
const ctx = await buildTestApp(t, { SITE_URL });
const { db } = ctx;
const run = promisify(execFile);

/** Enough SMTP to take messages: greeting, EHLO, MAIL, RCPT, DATA, QUIT. Each message as received. */
async function smtpSink() {
  const messages: string[] = [];
  const server = net.createServer((socket) => {
    socket.write('220 sink ESMTP\r\n');
    let buffer = '';
    let data: string | null = null;
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      for (let end = buffer.indexOf('\r\n'); end >= 0; end = buffer.indexOf('\r\n')) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (data !== null) {
          if (line === '.') {
            messages.push(data);
            data = null;
            socket.write('250 queued\r\n');
          } else data += `${line}\n`;
          continue;
        }
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO' || verb === 'HELO') socket.write('250 sink\r\n');
        else if (verb === 'DATA') {
          data = '';
          socket.write('354 end with .\r\n');
        } else if (verb === 'QUIT') socket.end('221 bye\r\n');
        else socket.write('250 ok\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  return { url: `smtp://127.0.0.1:${(server.address() as net.AddressInfo).port}`, messages };
}

/** A message's body as text (quoted-printable decoded when it is so encoded). */
const bodyOf = (message: string) =>
  /Content-Transfer-Encoding: quoted-printable/i.test(message)
    ? message.replace(/=\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    : message;

async function admin(env: Record<string, string>, ...args: string[]) {
  try {
    const { stdout, stderr } = await run('node', ['--import', 'tsx', 'src/accounts/cli.ts', ...args], {
      timeout: 180_000, // only a hang: the process is stopped and its checks fail
      env: {
        ...process.env,
        DATABASE_URL: db.ownerUrl,
        API_KEY_SECRET: TEST_KEY_SECRET,
        SMTP_URL: '',
        SITE_URL,
        ...env,
      },
    });
    return { code: 0, stdout: stdout.trim(), stderr: stderr.trim() };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout.trim(), stderr: e.stderr.trim() };
  }
}

const tokenOf = (link: string) => new URL(link).searchParams.get('token')!;

t.test('client invite prints a 7-day link that sets the password of the client’s sign-in', async (t) => {
  const email = uniqueEmail('invited');
  const { client } = await ctx.newClient('growth');
  await db.sql`UPDATE accounts.clients SET email = ${email} WHERE id = ${client.id}`;
  const res = await admin({ SITE_URL: 'https://api.example.test' }, 'client', 'invite', '--client', client.id);
  t.equal(res.code, 0, res.stderr);
  const link = /https:\/\/api\.example\.test\/account\/reset\/confirm\?token=[\w-]{43}/.exec(res.stdout)?.[0];
  t.ok(link, `prints the link: ${res.stdout}`);
  t.match(res.stdout, `Send this link to ${email} (it works once, for 7 days)`);
  const [row] = await db.sql<{ days: number }[]>`
    SELECT round(extract(epoch FROM expires_at - created_at) / 86400)::int AS days
      FROM accounts.site_tokens WHERE purpose = 'invite' AND email = ${email}`;
  t.equal(row!.days, 7);

  const path = `/account/reset/confirm?token=${tokenOf(link!)}`;
  const agent = new Agent(ctx);
  const page = await agent.get(path);
  t.equal(page.statusCode, 200);
  t.match(textOf(page.body), `Set the password for ${email}`);
  t.equal(
    (await new Agent(ctx).post('/account/login', { email, password: 'x' }, { from: '/account/login' })).statusCode,
    401,
    'no password before',
  );
  const set = await agent.post(
    '/account/reset/confirm',
    { token: tokenOf(link!), password: 'invited and in now' },
    { from: path },
  );
  t.equal(set.statusCode, 303);
  const login = new Agent(ctx);
  t.equal(
    (await login.post('/account/login', { email, password: 'invited and in now' }, { from: '/account/login' }))
      .statusCode,
    303,
  );
  t.match(textOf((await login.get('/account')).body), 'Growth', 'the operator’s client, on its plan');

  const json = await admin({}, 'client', 'invite', '--client', client.id, '--json');
  t.match(JSON.parse(json.stdout), {
    email,
    sent: false,
    link: new RegExp(`^${SITE}/account/reset/confirm\\?token=`),
  });
});

t.test('client invite refuses an unknown client and an email another sign-in uses', async (t) => {
  const unknown = await admin({}, 'client', 'invite', '--client', '00000000-0000-0000-0000-000000000000');
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, /^admin: client 00000000-0000-0000-0000-000000000000 not found/);
  const taken = await signUp(ctx);
  const { client } = await ctx.newClient('pro');
  await db.sql`UPDATE accounts.clients SET email = ${taken.email.toUpperCase()} WHERE id = ${client.id}`;
  const res = await admin({}, 'client', 'invite', '--client', client.id);
  t.equal(res.code, 1);
  t.match(res.stderr, /another account already signs in with/);
});

t.test('with SMTP_URL the invitation and the site’s links go by mail, and no link reaches the log', async (t) => {
  const sink = await smtpSink();
  const email = uniqueEmail('mailed');
  const { client } = await ctx.newClient('developer');
  await db.sql`UPDATE accounts.clients SET email = ${email} WHERE id = ${client.id}`;
  const res = await admin(
    { SMTP_URL: sink.url, MAIL_FROM: 'Ops <ops@example.test>' },
    'client',
    'invite',
    '--client',
    client.id,
  );
  t.equal(res.code, 0, res.stderr);
  t.equal(res.stdout, `invitation sent to ${email} (the link works once, for 7 days)`);
  t.notMatch(res.stdout, /token=/, 'the link is not printed');
  t.equal(sink.messages.length, 1);
  const invite = bodyOf(sink.messages[0]!);
  t.match(invite, `To: ${email}`);
  t.match(invite, 'From: Ops <ops@example.test>');
  t.match(invite, new RegExp(`${SITE}/account/reset/confirm\\?token=[\\w-]{43}`));

  const mailing = await buildTestApp(t, { SMTP_URL: sink.url, SITE_URL }, { db });
  const asked = await new Agent(mailing, '10.7.0.1').post('/account/reset', { email }, { from: '/account/reset' });
  t.equal(asked.statusCode, 200);
  t.notMatch(textOf(asked.body), /server's log/, 'the page does not send people to the log');
  // sent after the answer, usually within milliseconds; the minute only bounds a hang
  for (const until = Date.now() + 60_000; sink.messages.length < 2 && Date.now() < until;)
    await new Promise((r) => setTimeout(r, 20));
  t.equal(sink.messages.length, 2, 'the reset link went to the SMTP server');
  const reset = bodyOf(sink.messages[1]!);
  t.match(reset, 'Subject: Choose a new password');
  const link = new RegExp(`${SITE}/account/reset/confirm\\?token=([\\w-]{43})`).exec(reset)!;
  t.notOk(mailing.logs.join('\n').includes(link[1]!), 'and its token is nowhere in the log');
  t.notOk(
    mailing.logs.some((l) => l.includes('"mail":')),
    'no message is written to the log',
  );
});
