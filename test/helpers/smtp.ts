// A real SMTP server on a free loopback port that keeps every message it receives, and the project's mailer
// pointed at it (production mode: mails go over SMTP, not to the log). Both are closed when the test ends.
import type { Test } from 'tap';
import { SMTPServer } from 'smtp-server';
import { createMailer } from '../../src/site/mail.ts';

export interface Received {
  to: string[];
  raw: string;
}

export async function smtpSink(t: Test, from: string) {
  const received: Received[] = [];
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, done) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString() });
        done();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => smtp.close(() => resolve())));
  const port = (smtp.server.address() as { port: number }).port;
  const mailer = createMailer({
    smtpUrl: `smtp://127.0.0.1:${port}`,
    from,
    production: true,
    log: { info: () => {}, error: () => {} },
  });
  t.teardown(() => mailer.close());
  return { received, mailer };
}
