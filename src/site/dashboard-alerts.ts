// The low-credit email: once a minute each API process asks Postgres, in one statement on the metering's connection,
// which clients have fallen below the threshold they set and have had no email this billing period, and mails them
// with the site's mailer. The statement marks them
// sent as it answers, so each client gets at most one email a period however many processes ask; the request path
// never looks.
import type { Sql } from '../plugins/db.ts';
import { count } from './html.ts';
import type { Mail } from './mail.ts';
import { claimLowCreditAlerts } from './dashboard-queries.ts';

export const LOW_CREDIT_CHECK_MS = 60_000;

/** Mails every client below its threshold (as of `now`) not yet mailed this period; returns how many were mailed. */
export async function sendLowCreditAlerts(
  meterSql: Sql,
  send: (mail: Mail) => void,
  siteUrl: string,
  now = new Date(),
): Promise<number> {
  const due = await claimLowCreditAlerts(meterSql, now);
  for (const c of due) {
    send({
      to: c.email,
      subject: `Your Florida Property API credits are low: ${count(c.credits_left)} left`,
      text: [
        `Hello ${c.name},`,
        '',
        `Your account has ${count(c.credits_left)} credits left, below the ${count(c.threshold)} you asked us to warn you about.`,
        'When they run out, requests are refused with 402 until your plan renews or you add credits.',
        '',
        `Plans and credit packs: ${siteUrl}/account/plans`,
        `Your usage: ${siteUrl}/account/usage`,
        '',
        `This is the only such email for ${c.period}. Change or turn it off at ${siteUrl}/account/alerts`,
      ].join('\n'),
    });
  }
  return due.length;
}
