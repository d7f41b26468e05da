// The site's mail (sign-up links, password resets, invitations), sent with nodemailer over SMTP_URL. Without
// SMTP_URL, outside production, each message is written to the log instead, so that a person running `make run` can
// follow the link; in production without SMTP_URL nothing is sent and the log says so, without the message (its
// link is a secret).
import nodemailer from 'nodemailer';

export interface Mail {
  to: string;
  subject: string;
  text: string;
  /** Extra header fields (List-Unsubscribe …). */
  headers?: Record<string, string>;
}

export interface MailLog {
  info: (obj: object, msg: string) => void;
  error: (obj: object, msg: string) => void;
}

export interface Mailer {
  /** Resolves once the message is handed to the SMTP server (or logged); rejects when the server refuses it. */
  send: (mail: Mail) => Promise<void>;
  /** Where messages go, for the pages that tell people to look for one. */
  readonly mode: 'smtp' | 'log' | 'none';
  close: () => void;
}

export function createMailer(opts: { smtpUrl?: string; from: string; production: boolean; log: MailLog }): Mailer {
  if (opts.smtpUrl) {
    const transport = nodemailer.createTransport(opts.smtpUrl);
    return {
      mode: 'smtp',
      async send(mail) {
        await transport.sendMail({
          from: opts.from,
          to: mail.to,
          subject: mail.subject,
          text: mail.text,
          headers: mail.headers,
        });
      },
      close: () => transport.close(),
    };
  }
  if (!opts.production) {
    return {
      mode: 'log',
      async send(mail) {
        opts.log.info({ mail }, 'mail not sent (SMTP_URL is not set): the message follows');
      },
      close: () => {},
    };
  }
  return {
    mode: 'none',
    async send(mail) {
      opts.log.error({ subject: mail.subject }, 'mail not sent: SMTP_URL is not set');
    },
    close: () => {},
  };
}
