// The password rules on their own: the shipped list of common passwords and what each rule refuses.
import t from 'tap';
import { readFileSync } from 'node:fs';
import {
  HASHES_AT_ONCE,
  HASHES_WAITING,
  PER_ADDRESS,
  PasswordsBusy,
  commonPasswordCount,
  hashPassword,
  passwordProblem,
  passwordWork,
  verifyPassword,
  withPasswordSlot,
} from '../../src/site/passwords.ts';

t.test('the common-password list ships with the project: 10,000 lines', async (t) => {
  const lines = readFileSync(new URL('../../src/site/common-passwords.txt', import.meta.url), 'utf8').split('\n');
  t.equal(lines.at(-1), '', 'ends with a newline');
  t.equal(lines.length - 1, 10_000);
  t.same(lines.slice(0, 3), ['123456', 'password', '12345678'], 'most common first');
  t.equal(commonPasswordCount(), 9913, 'loaded lower-cased: 9,913 distinct in any letter case');
});

t.test('what the rules refuse and accept', async (t) => {
  const refused: [string, RegExp][] = [
    ['elevenchars', /at least 12 characters \(this one has 11\)/],
    ['ééééééééééé', /at least 12 characters \(this one has 11\)/],
    ['x'.repeat(257), /at most 256 characters/],
    ['1q2w3e4r5t6y', /most common/],
    ['QAZWSXEDCRFV', /most common/],
    ['password2024!', /most common/],
    ['!!dragon123456', /most common/],
    ['qwertyqwertyqwerty', /most common/],
    ['abcabcabcabc', /most common/],
    ['zzzzzzzzzzzzzzz', /most common/],
    ['jane.doe.rocks.2024', /email address/],
    ['P@ssw0rd1234', /most common .* letters swapped for digits or symbols/],
    ['passwordpassword1', /most common/],
    ['dr@g0ndr@g0n!!', /most common/],
    ['123456789012', /repeated or consecutive characters/],
    ['9876543210987', /repeated or consecutive characters/],
    ['mnopqrst6789', /repeated or consecutive characters/],
    ['aaaa1111bbbb', /repeated or consecutive characters/],
    ['j4ne_d0e_2024!', /email address/],
  ];
  for (const [password, rule] of refused) {
    t.match(passwordProblem(password, { email: 'jane.doe@example.com' }), rule, password);
  }
  t.match(passwordProblem('johnsmith1234', { email: 'john.smith@example.com' }), /from your email address/);
  t.match(passwordProblem('Smith.John.1990', { email: 'john.smith@example.com' }), /from your email address/);
  t.equal(passwordProblem('johnsmith1234', { email: 'mary@example.com' }), null, 'another person’s name is fine');
  t.equal(passwordProblem('john plays the cello', { email: 'john.smith@example.com' }), null, 'a name among words');
  for (const password of [
    'correct horse battery staple',
    '7 rivers 4 oak lanes',
    'plum-velvet-1987-kite',
    'Tr0ub4dor&3 plus more',
    'a long passphrase '.repeat(15).slice(0, 256),
    'ZxcvbnmQwerty Lake 9',
  ]) {
    t.equal(passwordProblem(password, { email: 'jane.doe@example.com' }), null, password);
  }
});

t.test('argon2id hashes that verify the password and nothing else', async (t) => {
  const hash = await hashPassword('correct horse battery staple', 'test');
  t.match(hash, /^\$argon2id\$v=19\$/);
  const params = hash.split('$')[3]!.split(',').sort();
  t.same(params, ['m=65536', 'p=4', 't=3'], '64 MiB, 4 lanes, 3 passes');
  t.equal(await verifyPassword(hash, 'correct horse battery staple', 'test'), true);
  t.equal(await verifyPassword(hash, 'correct horse battery stapl', 'test'), false);
  t.equal(await verifyPassword(null, 'anything', 'test'), false, 'no hash (unknown email): false, after a decoy check');
  t.equal(await verifyPassword('not a hash', 'anything', 'test'), false, 'a damaged hash: false, never an error');
});

t.test('password work: a few slots, a short queue served one address at a time, refusals past both', async (t) => {
  t.same(passwordWork(), { running: 0, waiting: 0 });
  const order: string[] = [];
  const releases = new Map<string, () => void>();
  /** Work that holds its slot until released by name; records when it starts. */
  const hold = (address: string, name: string) =>
    withPasswordSlot(address, async () => {
      order.push(name);
      await new Promise<void>((resolve) => releases.set(name, resolve));
    });
  const release = async (name: string) => {
    releases.get(name)!();
    releases.delete(name);
    for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
  };
  t.equal(HASHES_AT_ONCE, 4);
  t.equal(PER_ADDRESS, 2);
  const jobs = [hold('a', 'a1'), hold('a', 'a2'), hold('b', 'b1'), hold('b', 'b2')];
  await t.rejects(hold('a', 'a3'), { name: 'PasswordsBusy' }, 'an address holds at most 2, running or waiting');
  jobs.push(hold('c', 'c1'), hold('c', 'c2'), hold('d', 'd1'));
  await new Promise((resolve) => setImmediate(resolve));
  t.same(order, ['a1', 'a2', 'b1', 'b2'], 'four run at once');
  t.same(passwordWork(), { running: 4, waiting: 3 });
  await release('a1');
  await release('a2');
  await release('b1');
  t.same(order.slice(4), ['c1', 'd1', 'c2'], 'waiting work is served one address at a time, in turn');
  for (let i = 0; passwordWork().waiting < HASHES_WAITING; i++) jobs.push(hold(`q${i}`, `q${i}`));
  const busy = await hold('late', 'late').catch((err: unknown) => err);
  t.type(busy, PasswordsBusy, `past ${HASHES_WAITING} waiting, refused at once`);
  t.equal((busy as PasswordsBusy).retryAfter, 2);
  while (releases.size > 0) for (const name of [...releases.keys()]) await release(name);
  await Promise.all(jobs);
  t.same(passwordWork(), { running: 0, waiting: 0 }, 'every slot is given back');
});
