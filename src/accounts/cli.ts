// Operator CLI: `npm run --silent admin -- <command> [options] [--json]`. Errors are one line and exit 1.
import { readFileSync } from 'node:fs';
import postgres from 'postgres';
import { ownerDatabaseUrl } from '../db-url.ts';
import { createRedis, redisConnection } from '../plugins/redis.ts';
import { resolveKeySecret } from './keys.ts';
import { AccountError, PLANS, accounts, type ClientRow } from './service.ts';
import { parseCliArgs } from './cli-args.ts';
import { BILLING_USAGE, runBillingCli } from '../billing/cli.ts';
import { createMailer } from '../site/mail.ts';
import { loadLocalEnv } from '../local-env.ts';

const USAGE = `usage: npm run --silent admin -- <command> [--json]
  client create --name N --email E --plan P [--signup-at ISO8601]
  client suspend --client ID | client activate --client ID
  client set-plan --client ID --plan P [--subscription-status active|past_due|canceled]
  client set-limits --client ID [--rpm N] [--monthly-credits N]   (an enterprise contract; 'plan' restores the plan's)
  client show --client ID
  client list [--plan P] [--status active|suspended] [--email FRAGMENT] [--limit N]   (newest first)
  client find --email E   (exact email, any case)
  client invite --client ID   (emails a link to set an account-site password; without SMTP_URL prints it)
  key create --client ID [--mode live|test]
  key list --client ID
  key revoke --key ID
  pack grant --client ID --pack starter|investigator|bulk|power [--purchased-at ISO8601]
  ledger adjust --client ID --credits N --reason TEXT   (N may be negative)
${BILLING_USAGE}
plans: ${PLANS.join(', ')}`;

class UsageError extends Error {}

/** NAME, or the contents of the file NAME_FILE names (as the server reads its secrets). */
function readSecret(name: string): string | undefined {
  const file = process.env[`${name}_FILE`];
  return process.env[name] || (file ? readFileSync(file, 'utf8').trim() : undefined);
}

function need(values: Record<string, unknown>, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

/** A whole number option; 'plan' means "no override". */
function parseCount(value: string | undefined, name: string, allowNegative = false): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === 'plan') return null;
  if (!/^-?\d+$/.test(value) || (!allowNegative && value.startsWith('-'))) {
    throw new UsageError(`--${name} must be a whole number${allowNegative ? '' : ' >= 0'}, got '${value}'`);
  }
  return Number(value);
}

function parseDate(value: string | undefined, name: string): Date | undefined {
  if (value === undefined) return undefined;
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) throw new UsageError(`--${name} must be an ISO 8601 time, got '${value}'`);
  return d;
}

/** Clients as a table with a header, one per line, columns padded to their widest value. */
function clientTable(clients: ClientRow[]): string {
  const rows = [
    ['ID', 'NAME', 'EMAIL', 'PLAN', 'STATUS', 'SUBSCRIPTION', 'SIGNED UP'],
    ...clients.map((c) => [
      c.id,
      c.name,
      c.email,
      c.plan,
      c.status,
      c.subscription_status,
      c.signup_at.toISOString().slice(0, 16).replace('T', ' '),
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ');
  return rows.map((r) => line(r).trimEnd()).join('\n');
}

async function main(argv: string[]): Promise<void> {
  if (argv[0] === 'billing') {
    return runBillingCli(argv.slice(1), (j, text) => console.log(argv.includes('--json') ? JSON.stringify(j) : text));
  }
  const { values, positionals } = parseCliArgs(argv, {
    name: { type: 'string' },
    email: { type: 'string' },
    plan: { type: 'string' },
    'signup-at': { type: 'string' },
    pack: { type: 'string' },
    rpm: { type: 'string' },
    'monthly-credits': { type: 'string' },
    credits: { type: 'string' },
    reason: { type: 'string' },
    'purchased-at': { type: 'string' },
    client: { type: 'string' },
    key: { type: 'string' },
    mode: { type: 'string', default: 'live' },
    'subscription-status': { type: 'string' },
    status: { type: 'string' },
    limit: { type: 'string' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  });
  const command = positionals.join(' ');
  if (values.help || command === '') {
    console.log(USAGE);
    return;
  }
  const sql = postgres(ownerDatabaseUrl(), { max: 1, onnotice: () => {} });
  // The API's Redis: a change made here reaches every running API process on its next request.
  const redis = createRedis(redisConnection(process.env), process.env.REDIS_KEY_PREFIX || 'fl:');
  redis.on('error', () => {});
  const out = (json: unknown, text: string) => console.log(values.json ? JSON.stringify(json) : text);
  try {
    const svc = accounts(sql, resolveKeySecret(process.env), redis, (m) => console.error(`admin: warning: ${m}`));
    switch (command) {
      case 'client create': {
        const c = await svc.createClient({
          name: need(values, 'name'),
          email: need(values, 'email'),
          plan: need(values, 'plan'),
          signupAt: parseDate(values['signup-at'], 'signup-at'),
        });
        return out(c, c.id);
      }
      case 'client suspend':
      case 'client activate': {
        const c = await svc.setStatus(need(values, 'client'), command === 'client suspend' ? 'suspended' : 'active');
        return out(c, `${c.id} ${c.status}`);
      }
      case 'client set-plan': {
        const c = await svc.setPlan(need(values, 'client'), need(values, 'plan'), values['subscription-status']);
        return out(c, `${c.id} ${c.plan} ${c.subscription_status}`);
      }
      case 'key create': {
        if (values.mode !== 'live' && values.mode !== 'test') throw new UsageError('--mode must be live or test');
        const { key, row } = await svc.createKey(need(values, 'client'), values.mode);
        if (!values.json) console.error('Shown once: store it now; only its hash is kept.');
        return out({ ...row, key }, key);
      }
      case 'key list': {
        const keys = await svc.listKeys(need(values, 'client'));
        return out(
          keys,
          keys
            .map(
              (k) =>
                `${k.id}  ${k.mode}  ${k.display}  ${k.status}  last used ${k.last_used_at?.toISOString() ?? 'never'}`,
            )
            .join('\n'),
        );
      }
      case 'key revoke': {
        const k = await svc.revokeKey(need(values, 'key'));
        return out(k, `${k.id} revoked`);
      }
      case 'client set-limits': {
        const rpm = parseCount(values.rpm, 'rpm');
        const monthlyCredits = parseCount(values['monthly-credits'], 'monthly-credits');
        if (rpm === undefined && monthlyCredits === undefined)
          throw new UsageError('give --rpm and/or --monthly-credits');
        if (rpm === 0) throw new UsageError('--rpm must be at least 1');
        const c = await svc.setLimits(need(values, 'client'), { rpm, monthlyCredits });
        return out(c, `${c.id} limits set`);
      }
      case 'client list': {
        const limit = parseCount(values.limit ?? '100', 'limit');
        if (!limit) throw new UsageError('--limit must be at least 1');
        const { clients, more } = await svc.listClients({
          plan: values.plan,
          status: values.status,
          email: values.email,
          limit,
        });
        const note = more ? `\n(the newest ${limit}; more match: narrow the filter or raise --limit)` : '';
        return out(clients, clients.length === 0 ? 'no client matches' : clientTable(clients) + note);
      }
      case 'client find': {
        const clients = await svc.findClients(need(values, 'email'));
        return out(clients, clientTable(clients));
      }
      case 'client show': {
        const s = await svc.showClient(need(values, 'client'));
        const text = [
          `${s.client.name} <${s.client.email}>  ${s.client.id}`,
          `plan ${s.client.plan} (${s.client.subscription_status}), status ${s.client.status}, signed up ${s.client.signup_at.toISOString()}`,
          `limits: rpm ${s.client.custom_rpm ?? 'plan'}, monthly credits ${s.client.custom_monthly_credits ?? 'plan'}`,
          `remaining: monthly ${s.balances?.monthly}, one-time ${s.balances?.credits}, packs ${JSON.stringify(s.balances?.packs)}; overage used ${s.balances?.overage_used}`,
          `this month: ${s.usage?.events_count} of ${s.usage?.monthly_quota} (${s.usage?.percent_used}%), resets ${s.usage?.reset_date}`,
          'ledger (newest first):',
          ...s.ledger.map(
            (l) =>
              `  ${l.created_at.toISOString()}  ${String(l.delta).padStart(7)}  ${l.bucket}${l.period ? ` ${l.period}` : ''}  ${l.reason}`,
          ),
          'overage invoice lines:',
          ...s.overage.map((o) => `  ${o.day}  ${o.credits} credits  $${(o.amount_cents / 100).toFixed(2)}`),
        ].join('\n');
        return out(s, text);
      }
      case 'client invite': {
        const siteUrl = process.env.SITE_URL || `http://127.0.0.1:${process.env.PORT || '3000'}`;
        const invite = await svc.invite(need(values, 'client'), siteUrl);
        const smtpUrl = readSecret('SMTP_URL');
        if (!smtpUrl) {
          return out(
            { email: invite.email, link: invite.link, sent: false },
            `Send this link to ${invite.email} (it works once, for 7 days):\n${invite.link}`,
          );
        }
        const mailer = createMailer({
          smtpUrl,
          from: process.env.MAIL_FROM || 'Florida Property API <no-reply@localhost>',
          production: true,
          log: { info: () => {}, error: () => {} },
        });
        try {
          await mailer.send({
            to: invite.email,
            subject: 'Your Florida Property API account',
            text: `${invite.name} has an account on the Florida Property API. Follow this link within 7 days to set its password and sign in:\n\n${invite.link}\n\nThe link works once.\n`,
          });
        } finally {
          mailer.close();
        }
        return out(
          { email: invite.email, sent: true },
          `invitation sent to ${invite.email} (the link works once, for 7 days)`,
        );
      }
      case 'ledger adjust': {
        const credits = parseCount(need(values, 'credits'), 'credits', true);
        const l = await svc.adjustCredits(need(values, 'client'), credits ?? 0, need(values, 'reason'));
        return out(l, `${l.id} ${l.delta > 0 ? '+' : ''}${l.delta} credits: ${l.reason}`);
      }
      case 'pack grant': {
        const p = await svc.grantPack(
          need(values, 'client'),
          need(values, 'pack'),
          parseDate(values['purchased-at'], 'purchased-at'),
        );
        return out(p, `${p.id} ${p.pack} ${p.credits} credits, expires ${p.expires_at.toISOString()}`);
      }
      default:
        throw new UsageError(`unknown command '${command}'\n${USAGE}`);
    }
  } finally {
    redis.disconnect();
    await sql.end();
  }
}

loadLocalEnv(); // this clone's database and Redis when DATABASE_URL, PGPORT and REDIS_PORT are not set
main(process.argv.slice(2)).catch((err: Error & { code?: string }) => {
  const message =
    err instanceof AccountError || err instanceof UsageError
      ? err.message
      : err.code === '22P02'
        ? 'that id is not a valid id (expected a UUID)'
        : err.code === 'ECONNREFUSED'
          ? 'cannot reach the database: is it running (make services)? is DATABASE_URL right?'
          : err.message;
  console.error(`admin: ${message}`);
  process.exit(1);
});
