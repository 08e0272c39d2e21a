// The approval pages at the verification URL (DEV-FLOW-USER-DECISION): a form for the user code (pre-filled from
// `?user_code=`, as verification_uri_complete does), a consent page naming the client and the scopes with an account
// chooser, and a result page. Forms carry a CSRF token that must match a cookie (double submit).
import type { IncomingMessage } from 'node:http';
import { randomText } from './jwt.js';
import type { OAuthContext } from './context.js';
import { escapeHtml, type Reply } from './http.js';
import type { DeviceCode } from './store.js';

const CSRF_COOKIE = 'gantry_oauth_csrf';

export const SCOPE_DESCRIPTIONS: Record<string, string> = {
  email: 'See your primary e-mail address',
  openid: 'Associate you with your personal info',
  profile: 'See your personal info, including any you made publicly available',
  'auth/storage.appdata': "See, create and delete the application's own configuration data in your storage",
  'auth/storage.file': 'See, edit, create and delete only the specific files you use with this app',
  'auth/video': 'Manage your video account',
  'auth/video.readonly': 'View your video account',
};

export function page(title: string, body: string, status = 200, headers?: Record<string, string>): Reply {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#202124}
input[type=text]{font-size:1.5rem;letter-spacing:.15em;width:100%;padding:.4rem}button{font-size:1rem;padding:.5rem 1.2rem;margin:.5rem .5rem 0 0}
li{margin:.3rem 0}.error{color:#b00020}</style></head>
<body><h1>${escapeHtml(title)}</h1>
${body}
</body></html>
`;
  return { status, html, ...(headers ? { headers } : {}) };
}

function csrfOf(req: IncomingMessage): { token: string; setCookie?: string } {
  const existing = cookie(req, CSRF_COOKIE);
  if (existing && /^[A-Za-z0-9_-]{32,}$/.test(existing)) return { token: existing };
  const token = randomText(24);
  return { token, setCookie: `${CSRF_COOKIE}=${token}; Path=/device; HttpOnly; SameSite=Strict` };
}

function cookie(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return undefined;
}

function csrfOk(req: IncomingMessage, form: URLSearchParams): boolean {
  const sent = form.get('csrf');
  return !!sent && sent === cookie(req, CSRF_COOKIE);
}

/** GET /device: the form where a person types the code. */
export function codeForm(req: IncomingMessage, prefill: string | null, message?: string, status = 200): Reply {
  const csrf = csrfOf(req);
  const value = prefill ? ` value="${escapeHtml(prefill.slice(0, 64))}"` : '';
  return page(
    'Connect a device',
    `${message ? `<p class="error" id="error">${escapeHtml(message)}</p>\n` : ''}<p>Enter the code shown on your device.</p>
<form method="post" action="/device">
<input type="hidden" name="csrf" value="${csrf.token}">
<label for="user_code">Code</label>
<input type="text" name="user_code" id="user_code" autocomplete="off" autocapitalize="off" spellcheck="false" maxlength="64" required autofocus${value}>
<button type="submit" id="continue">Continue</button>
</form>`,
    status,
    csrf.setCookie ? { 'set-cookie': csrf.setCookie } : undefined,
  );
}

function badCode(req: IncomingMessage, typed: string): Reply {
  return codeForm(req, typed, 'That code is not valid or has expired. Check the code on your device, or start again there.', 400);
}

function describeScope(context: OAuthContext, scope: string): string {
  const base = `${context.options.scopeBase}/`;
  return SCOPE_DESCRIPTIONS[scope.startsWith(base) ? scope.slice(base.length) : scope] ?? scope;
}

/** POST /device: the code typed, answered with the consent page (client, scopes, accounts) or a 400 page. */
export function consentPage(context: OAuthContext, req: IncomingMessage, form: URLSearchParams): Reply {
  if (!csrfOk(req, form)) return codeForm(req, null, 'The form has expired. Enter the code again.', 403);
  const typed = (form.get('user_code') ?? '').trim();
  const code = context.store.codeByUserCode(typed);
  if (!code) return badCode(req, typed);
  if (code.state !== 'pending')
    return page('Code already used', '<p class="error" id="error">This code has already been used. Start again on your device.</p>', 400);
  const client = context.store.clients.get(code.clientId);
  const accounts = [...context.store.users.values()];
  const firstActive = accounts.find((u) => !u.disabled);
  const chooser = accounts
    .map(
      (u) =>
        `<li><label><input type="radio" name="account" id="account-${escapeHtml(u.username)}" value="${escapeHtml(u.username)}"${u === firstActive ? ' checked' : ''}${u.disabled ? ' disabled' : ''}> ${escapeHtml(u.name)} &lt;${escapeHtml(u.email)}&gt;${u.disabled ? ' (disabled)' : ''}</label></li>`,
    )
    .join('\n');
  const scopes = code.scopes
    .map((s) => `<li><span class="scope">${escapeHtml(describeScope(context, s))}</span> <small>(${escapeHtml(s)})</small></li>`)
    .join('\n');
  return page(
    `${client?.name ?? 'An application'} wants to access your account`,
    `<p><strong id="client">${escapeHtml(client?.name ?? code.clientId)}</strong> will be able to:</p>
<ul id="scopes">
${scopes}
</ul>
<form method="post" action="/device/decision">
<input type="hidden" name="csrf" value="${escapeHtml(form.get('csrf')!)}">
<input type="hidden" name="user_code" value="${escapeHtml(code.userCode)}">
<p>Choose an account:</p>
<ul id="accounts">
${chooser}
</ul>
<button type="submit" name="decision" value="allow" id="allow">Allow</button>
<button type="submit" name="decision" value="deny" id="deny" formnovalidate>Deny</button>
</form>`,
  );
}

/** POST /device/decision: allow (as the chosen account) or deny, then the result page. */
export function decide(context: OAuthContext, req: IncomingMessage, form: URLSearchParams): Reply {
  if (!csrfOk(req, form)) return codeForm(req, null, 'The form has expired. Enter the code again.', 403);
  const typed = (form.get('user_code') ?? '').trim();
  const code = context.store.codeByUserCode(typed);
  if (!code) return badCode(req, typed);
  const decision = form.get('decision');
  if (decision !== 'allow' && decision !== 'deny') return page('Choose', '<p class="error" id="error">Choose Allow or Deny.</p>', 400);
  const result = applyDecision(context, code, decision, form.get('account') ?? undefined);
  if (result !== 'ok') return page('Cannot allow access', `<p class="error" id="error">${escapeHtml(result)}</p>`, 400);
  return decision === 'allow'
    ? page('Access granted', '<p id="result">Access granted — you may close this window and return to your device.</p>')
    : page('Access denied', '<p id="result">Access denied — the device will not get access. You may close this window.</p>');
}

/** Records a person's decision on a pending code; 'ok' or why not (the admin API's approve and deny use it too). */
export function applyDecision(context: OAuthContext, code: DeviceCode, decision: 'allow' | 'deny', account?: string): string {
  if (code.expiresAt <= Date.now()) return 'This code has expired. Start again on your device.';
  if (code.state !== 'pending') return 'This code has already been used. Start again on your device.';
  if (decision === 'deny') {
    code.state = 'denied';
    return 'ok';
  }
  const user = account ? context.store.findUser(account) : [...context.store.users.values()].find((u) => !u.disabled);
  if (!user) return `No account ${account ?? ''} here.`.replace(' .', '.');
  if (user.disabled) return `The account ${user.email} is disabled.`;
  code.state = 'granted';
  code.username = user.username;
  return 'ok';
}
