// Makes sure a demo client and key exist and prints a curl line that works as printed. The raw demo key is
// kept in the git-ignored .local/ so every `make run` can print it again.
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import postgres from 'postgres';
import { ownerDatabaseUrl } from '../src/db-url.ts';
import { resolveKeySecret } from '../src/accounts/keys.ts';
import { accounts } from '../src/accounts/service.ts';

const LOCAL = join(new URL('..', import.meta.url).pathname, '.local');
const KEY_FILE = join(LOCAL, 'demo-key');

const sql = postgres(ownerDatabaseUrl(), { max: 1, onnotice: () => {} });
try {
  const svc = accounts(sql, resolveKeySecret(process.env, { create: true }));
  let key = existsSync(KEY_FILE) ? readFileSync(KEY_FILE, 'utf8').trim() : '';
  if (!key || !(await svc.isActiveKey(key))) {
    const client = await svc.createClient({ name: 'Demo', email: 'demo@localhost.localdomain', plan: 'growth' });
    key = (await svc.createKey(client.id, 'live')).key;
    mkdirSync(LOCAL, { recursive: true });
    writeFileSync(KEY_FILE, `${key}\n`, { mode: 0o600 });
  }
  const port = process.env.PORT || '3000';
  console.log(`\nDemo key (Growth plan, 300 requests/min) kept in .local/demo-key. Try:\n`);
  console.log(`  curl -s -H "Authorization: Bearer ${key}" "http://127.0.0.1:${port}/v1/counties/miami-dade"\n`);
  const site = process.env.SITE_URL || `http://127.0.0.1:${port}`;
  console.log(`  API             ${site}/v1/…          (a JSON index of every entry point: curl ${site}/)`);
  console.log(`  Home page       ${site}/`);
  console.log(`  Account site    ${site}/account       (sign up, keys, usage)`);
  console.log(`  Docs            ${site}/docs          (guides; API reference at ${site}/docs/reference)`);
  console.log(`  Map explorer    ${site}/explorer\n`);
} finally {
  await sql.end();
}
