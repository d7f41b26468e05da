// The password rules on their own: the shipped list of common passwords and what each rule refuses.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { commonPasswordCount, hashPassword, passwordProblem, verifyPassword } from '../../src/site/passwords.ts';

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
  ];
  for (const [password, rule] of refused) {
    t.match(passwordProblem(password, { email: 'jane.doe@example.com' }), rule, password);
  }
  for (const password of [
    'correct horse battery staple',
    'Tr0ub4dor&3 plus more',
    'a long passphrase '.repeat(15).slice(0, 256),
    'ZxcvbnmQwerty Lake 9',
  ]) {
    t.equal(passwordProblem(password, { email: 'jane.doe@example.com' }), null, password);
  }
});

t.test('argon2id hashes that verify the password and nothing else', async (t) => {
  const hash = await hashPassword('correct horse battery staple');
  t.match(hash, /^\$argon2id\$v=19\$/);
  const params = hash.split('$')[3]!.split(',').sort();
  t.same(params, ['m=65536', 'p=4', 't=3'], '64 MiB, 4 lanes, 3 passes');
  t.equal(await verifyPassword(hash, 'correct horse battery staple'), true);
  t.equal(await verifyPassword(hash, 'correct horse battery stapl'), false);
  t.equal(await verifyPassword(null, 'anything'), false, 'no hash (unknown email): false, after a decoy check');
  t.equal(await verifyPassword('not a hash', 'anything'), false, 'a damaged hash: false, never an error');
});
