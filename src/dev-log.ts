// The server's log in development (`make run`): pino-pretty's readable lines instead of JSON, a request on one line,
// and the mail the site would send (sign-up and reset links, without SMTP_URL) as its text, so that its link sits on
// a line of its own to copy. Production and tests keep JSON lines (src/main.ts decides).
import pretty from 'pino-pretty';

interface LoggedMail {
  to?: string;
  subject?: string;
  text?: string;
}

/** One line per request: "request completed: GET /v1/counties 200 in 3.1 ms (req_…)". */
function messageFormat(log: Record<string, unknown>, messageKey: string): string {
  const req = log.req as { method?: string; url?: string } | undefined;
  const res = log.res as { statusCode?: number } | undefined;
  const parts = [String(log[messageKey] ?? '')];
  if (req) parts.push(`${req.method} ${req.url}`);
  if (res) parts.push(`${res.statusCode}`);
  if (typeof log.responseTime === 'number') parts.push(`in ${log.responseTime.toFixed(1)} ms`);
  if (log.reqId) parts.push(`(${String(log.reqId)})`);
  return parts.join(' ');
}

/** The mail as a person reads it: recipient and subject, a blank line, then its text line by line. */
function mailText(value: unknown): string {
  const mail = value as LoggedMail;
  return ['', `To: ${mail.to}`, `Subject: ${mail.subject}`, '', ...(mail.text ?? '').split('\n'), ''].join('\n');
}

/** A stream for pino that writes readable lines to `destination` (default stdout, in colour on a terminal). */
export function developmentLogStream(destination?: NodeJS.WritableStream): NodeJS.WritableStream {
  return pretty({
    ...(destination ? { destination } : {}),
    colorize: !destination && process.stdout.isTTY === true,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname,req,res,reqId,responseTime',
    messageFormat,
    customPrettifiers: { mail: mailText },
  });
}
