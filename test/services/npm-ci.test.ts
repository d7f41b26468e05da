// scripts/npm-ci.sh says what it does while npm ci runs: the packages to install, a progress line counting those
// unpacked (every 15 s in a log), and the total at the end. An npm on PATH that unpacks slowly stands in for the
// registry, in a copy of the script's folder.
import t from 'tap';
import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = new URL('../..', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'florida-npm-ci-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
mkdirSync(join(dir, 'scripts'));
mkdirSync(join(dir, 'bin'));
copyFileSync(join(ROOT, 'scripts', 'npm-ci.sh'), join(dir, 'scripts', 'npm-ci.sh'));
writeFileSync(join(dir, 'package.json'), '{}\n');
const names = ['alpha', '@scope/beta', 'gamma', 'alpha/node_modules/delta'];
writeFileSync(
  join(dir, 'package-lock.json'),
  JSON.stringify({ packages: Object.fromEntries(names.map((n) => [`node_modules/${n}`, {}])) }, null, 2),
);
// unpacks two packages at once, the other two 17 s later, then writes npm's own stamp
writeFileSync(
  join(dir, 'bin', 'npm'),
  `#!/bin/sh
unpack() { mkdir -p "node_modules/$1" && echo '{}' > "node_modules/$1/package.json"; }
unpack alpha; unpack @scope/beta
sleep 17
unpack gamma; unpack alpha/node_modules/delta
echo '{}' > node_modules/.package-lock.json
`,
);
chmodSync(join(dir, 'bin', 'npm'), 0o755);
const env = { ...process.env, PATH: `${join(dir, 'bin')}:${process.env.PATH}` };

t.test('a progress line while npm ci runs, the total at the end, nothing when up to date', async (t) => {
  const run = promisify(execFile);
  const { stdout } = await run('bash', [join(dir, 'scripts', 'npm-ci.sh')], { env, timeout: 120_000 });
  const lines = stdout.trim().split('\n');
  t.equal(lines[0], 'npm-ci: installing 4 packages');
  t.match(lines.slice(1, -1).join('\n'), /^npm-ci: 2 of 4 packages unpacked, 1\d s$/m, 'progress during the install');
  t.match(lines.at(-1), /^npm-ci: installed 4 packages in \d+ s$/);
  const again = await run('bash', [join(dir, 'scripts', 'npm-ci.sh')], { env, timeout: 120_000 });
  t.equal(again.stdout, '', 'node_modules newer than the lock file: npm ci is not run');
});
