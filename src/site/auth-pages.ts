// The account site's sign-up, sign-in and password pages, and the plain message page. Each takes what its route
// read and the CSRF token for its forms, and returns escaped HTML (html.ts); the layout around them is html.ts's `page`.
import { csrfField, html, raw, type Html } from './html.ts';
import { MAX_PASSWORD, MIN_PASSWORD } from './passwords.ts';

export type Errors = Partial<Record<string, string>>;

interface FieldOptions {
  label: string;
  name: string;
  type?: string;
  value?: string;
  autocomplete: string;
  hint?: string | Html;
  errors?: Errors;
  minlength?: number;
  maxlength?: number;
}

/** A labelled input; its hint and error are tied to it with aria-describedby, and an error marks it aria-invalid. */
export function field(f: FieldOptions): Html {
  const id = `f-${f.name}`;
  const error = f.errors?.[f.name];
  const described = [f.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return html`<div class="field${error ? ' invalid' : ''}">
    <label for="${id}">${f.label}</label>
    ${f.hint ? html`<p class="hint" id="${id}-hint">${f.hint}</p>` : ''}
    ${error ? html`<p class="error" id="${id}-error">${error}</p>` : ''}
    <input
      id="${id}"
      name="${f.name}"
      type="${f.type ?? 'text'}"
      value="${f.value ?? ''}"
      autocomplete="${f.autocomplete}"
      required${
        f.minlength ? html` minlength="${f.minlength}"` : ''
      }${f.maxlength ? html` maxlength="${f.maxlength}"` : ''}${described ? html` aria-describedby="${described}"` : ''}${
        error ? raw(' aria-invalid="true"') : ''
      }
    />
  </div>`;
}

const passwordHint = `At least ${MIN_PASSWORD} characters. A few unrelated words make a strong one; common passwords are refused.`;

const newPasswordField = (errors: Errors, label = 'Password') =>
  field({
    label,
    name: 'password',
    type: 'password',
    autocomplete: 'new-password',
    hint: passwordHint,
    errors,
    minlength: MIN_PASSWORD,
    maxlength: MAX_PASSWORD,
  });

export function signupPage(csrf: string, values: { name?: string; email?: string } = {}, errors: Errors = {}): Html {
  return html`<p class="lead">
      Create an account on the Free Trial: 500 credits (one per successful request), 30 requests a minute, no card. We
      email you a link to confirm your address; following it creates the account and signs you in.
    </p>
    <form method="post" action="/account/signup" class="card form" novalidate>
      ${csrfField(csrf)}
      ${field({ label: 'Name', name: 'name', value: values.name, autocomplete: 'name', hint: 'Yours or your company’s.', errors, maxlength: 200 })}
      ${field({ label: 'Email', name: 'email', type: 'email', value: values.email, autocomplete: 'email', errors, maxlength: 254 })}
      ${newPasswordField(errors)}
      <button type="submit">Create account</button>
    </form>
    <p>Already have an account? <a href="/account/login">Sign in</a>.</p>`;
}

const mailWhere = (mode: string) =>
  mode === 'log'
    ? html`<p class="hint">
        This service runs without an SMTP server (<code>SMTP_URL</code> is not set): the message is written to the
        server's log instead, where you can copy the link from.
      </p>`
    : '';

export function checkInboxPage(email: string, mailMode: string): Html {
  return html`<div class="card">
    <p>
      We sent a message to <strong>${email}</strong>. Follow its link within 30 minutes to finish creating your account.
      If this address already has an account, the message says how to sign in instead.
    </p>
    ${mailWhere(mailMode)}
    <p>No message after a few minutes? Check your spam folder, or <a href="/account/signup">start again</a>.</p>
  </div>`;
}

export function confirmSignupPage(csrf: string, email: string, token: string): Html {
  return html`<form method="post" action="/account/signup/confirm" class="card form">
    ${csrfField(csrf)}
    <input type="hidden" name="token" value="${token}" />
    <p>Create the Free Trial account for <strong>${email}</strong> and sign in.</p>
    <button type="submit">Create my account</button>
  </form>`;
}

export function invalidLinkPage(again: { href: string; label: string }): Html {
  return html`<div class="card">
    <p>
      This link does not work: it was used already, it has expired (links work for 30 minutes; invitations for 7 days),
      or it was copied incompletely.
    </p>
    <p><a href="${again.href}">${again.label}</a></p>
  </div>`;
}

export function loginPage(csrf: string, values: { email?: string; next?: string } = {}, errors: Errors = {}): Html {
  return html`<form method="post" action="/account/login" class="card form" novalidate>
      ${csrfField(csrf)} ${values.next ? html`<input type="hidden" name="next" value="${values.next}" />` : ''}
      ${field({ label: 'Email', name: 'email', type: 'email', value: values.email, autocomplete: 'username', errors, maxlength: 254 })}
      ${field({ label: 'Password', name: 'password', type: 'password', autocomplete: 'current-password', errors, maxlength: MAX_PASSWORD })}
      <button type="submit">Sign in</button>
    </form>
    <p>
      <a href="/account/reset">Forgot your password?</a> · No account yet? <a href="/account/signup">Create one</a>.
    </p>`;
}

export function resetRequestPage(csrf: string, email = '', errors: Errors = {}): Html {
  return html`<p class="lead">
      Enter the email you sign in with; we send a link to choose a new password. It works once, for 30 minutes.
    </p>
    <form method="post" action="/account/reset" class="card form" novalidate>
      ${csrfField(csrf)}
      ${field({ label: 'Email', name: 'email', type: 'email', value: email, autocomplete: 'email', errors, maxlength: 254 })}
      <button type="submit">Send the link</button>
    </form>`;
}

export function resetSentPage(email: string, mailMode: string): Html {
  return html`<div class="card">
    <p>
      If an account signs in with <strong>${email}</strong>, we have sent it a link to choose a new password. The link
      works once, for 30 minutes.
    </p>
    ${mailWhere(mailMode)}
    <p><a href="/account/login">Back to sign in</a></p>
  </div>`;
}

export function setPasswordPage(
  csrf: string,
  link: { purpose: string; email: string; token: string },
  errors: Errors = {},
): Html {
  return html`<form method="post" action="/account/reset/confirm" class="card form" novalidate>
    ${csrfField(csrf)}
    <input type="hidden" name="token" value="${link.token}" />
    <p>
      ${link.purpose === 'invite' ? 'Set the password' : 'Choose a new password'} for <strong>${link.email}</strong>.
      Every device signed in to this account is signed out.
    </p>
    ${newPasswordField(errors, 'New password')}
    <button type="submit">Save password</button>
  </form>`;
}

export function changePasswordPage(csrf: string, errors: Errors = {}): Html {
  return html`<form method="post" action="/account/password" class="card form" novalidate>
    ${csrfField(csrf)}
    ${field({ label: 'Current password', name: 'current', type: 'password', autocomplete: 'current-password', errors, maxlength: MAX_PASSWORD })}
    ${newPasswordField(errors, 'New password')}
    <p class="hint">Changing your password signs out every other device signed in to this account.</p>
    <button type="submit">Change password</button>
  </form>`;
}

export function messagePage(text: string | Html, link?: { href: string; label: string }): Html {
  return html`<div class="card">
    <p>${text}</p>
    ${link ? html`<p><a href="${link.href}">${link.label}</a></p>` : ''}
  </div>`;
}
