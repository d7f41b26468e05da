// The account site's attempt limits: sign-in, sign-up and password reset, per address and per email, in Redis, with a
// clear message; an unknown email is limited exactly like a known one.
import t from 'tap';
import { buildTestApp } from '../helpers/app.ts';
import { Agent, GOOD_PASSWORD, signUp, roomInThrottleWindow, textOf, uniqueEmail } from './helpers.ts';
import { throttle, waitText } from '../../src/site/throttle.ts';

// dozens of argon2 checks, and up to five minutes' wait for a throttle window with room for them
t.setTimeout(900_000);
const ctx = await buildTestApp(t);

// the sign-in test's argon2 checks take about a minute on a loaded machine: five minutes' room
t.beforeEach(roomInThrottleWindow(300_000));

t.test(
  'sign-in is limited per email and per address, with a clear message; an unknown email counts the same',
  async (t) => {
    const { email, password } = await signUp(ctx);
    const agent = new Agent(ctx, '10.3.0.1');
    for (let i = 0; i < 10; i++) {
      const res = await agent.post(
        '/account/login',
        { email, password: 'wrong password!!' },
        { from: '/account/login' },
      );
      t.equal(res.statusCode, 401, `failure ${i + 1} of 10`);
    }
    const limited = await agent.post('/account/login', { email, password }, { from: '/account/login' });
    t.equal(limited.statusCode, 429, 'past 10 failures for the email, even the right password waits');
    t.match(
      textOf(limited.body),
      /Too many attempts from your network or for this email\. .* try again in \d+ (minutes?|seconds?)\./,
    );
    const elsewhere = await new Agent(ctx, '10.3.0.2').post(
      '/account/login',
      { email, password },
      { from: '/account/login' },
    );
    t.equal(elsewhere.statusCode, 429, 'from another address too: the limit is per email');

    const unknown = uniqueEmail('ghost');
    const probe = new Agent(ctx, '10.3.0.3');
    const statuses = [];
    for (let i = 0; i < 11; i++) {
      statuses.push(
        (
          await probe.post(
            '/account/login',
            { email: unknown, password: 'wrong password!!' },
            { from: '/account/login' },
          )
        ).statusCode,
      );
    }
    t.same(statuses, [...Array(10).fill(401), 429], 'an unknown email is limited exactly like a known one');

    // per address: 30 failures from one address over many emails
    const spray = new Agent(ctx, '10.3.0.4');
    const sprayed = [];
    for (let i = 0; i < 31; i++) {
      sprayed.push(
        (await spray.post('/account/login', { email: uniqueEmail('spray'), password: 'x' }, { from: '/account/login' }))
          .statusCode,
      );
    }
    t.equal(sprayed.at(-1), 429, 'the 31st failure from one address is refused');
    t.equal(sprayed.filter((s) => s === 401).length, 30);
  },
);

t.test('sign-up and reset are limited per address and per email', async (t) => {
  const agent = new Agent(ctx, '10.4.0.1');
  const statuses = [];
  for (let i = 0; i < 11; i++) {
    const res = await agent.post(
      '/account/signup',
      { name: 'Flood', email: uniqueEmail('flood'), password: GOOD_PASSWORD },
      { from: '/account/signup' },
    );
    statuses.push(res.statusCode);
  }
  t.same(statuses, [...Array(10).fill(200), 429], '10 sign-ups an address per 15 minutes');
  t.match(textOf(agent.lastBody), /Too many attempts/);

  const email = uniqueEmail('resetflood');
  const resets = [];
  for (let i = 0; i < 6; i++) {
    resets.push(
      (await new Agent(ctx, `10.4.1.${i}`).post('/account/reset', { email }, { from: '/account/reset' })).statusCode,
    );
  }
  t.same(resets, [200, 200, 200, 200, 200, 429], '5 resets an email per 15 minutes, from any address');
});

t.test('attempts sent at once take one each; a right password gives its attempt back', async (t) => {
  const limits = throttle(ctx.app.redis, (m) => t.fail(m));
  const email = uniqueEmail('burst');
  const waits = await Promise.all(Array.from({ length: 40 }, () => limits.take('login', '10.5.0.1', email)));
  t.equal(waits.filter((w) => w === 0).length, 10, '40 at once: 10 taken, 30 refused');
  t.ok(
    waits.every((w) => w === 0 || w > 0),
    'a refusal says how long to wait',
  );
  const others = [];
  for (let i = 0; i < 21; i++) others.push(await limits.take('login', '10.5.0.1', uniqueEmail('other')));
  t.same(
    others.map((w) => w === 0),
    [...Array(20).fill(true), false],
    'the 30 refused took nothing from the address: 20 of its 30 were left',
  );

  const checked = [];
  const right = uniqueEmail('right');
  for (let i = 0; i < 12; i++) checked.push(await limits.guard('login', '10.5.0.2', right, async () => true));
  t.ok(
    checked.every((c) => c.wait === 0 && c.ok),
    'right passwords are given back: 12 in a row',
  );
  let ran = 0;
  const wrong = [];
  for (let i = 0; i < 11; i++) {
    wrong.push(
      await limits.guard('login', '10.5.0.2', right, async () => {
        ran++;
        return false;
      }),
    );
  }
  t.equal(ran, 10, 'ten wrong ones are checked');
  t.ok(wrong.at(-1)!.wait > 0 && !wrong.at(-1)!.ok, 'the eleventh is refused before its check');
});

t.test('the wait is said in minutes or seconds', async (t) => {
  t.equal(waitText(1), '1 second');
  t.equal(waitText(59), '59 seconds');
  t.equal(waitText(60), '1 minute');
  t.equal(waitText(61), '2 minutes');
  t.equal(waitText(900), '15 minutes');
});
