// The authorization code flow's login and consent page (GET /authorize shows it, POST /authorize/decision answers
// it): the client's name, the scopes and the resource asked for, username and password, Allow and Deny. Stable ids
// and names for tests: #username, #password, button[name=decision][value=allow|deny] (#allow, #deny), the hidden
// `transaction`, #client, #scopes, #resource, #error. The hidden transaction id is the form's CSRF defence: random,
// single-use, bound to one authorization request, gone after 10 minutes.
import { escapeHtml, type Reply } from './http.js';
import { page } from './pages.js';
import type { AuthorizeTransaction, Client } from './store.js';

export const CONTEXT_SCOPE_DESCRIPTIONS: Record<string, string> = {
  'modules:read': 'Resolve module versions and read the registry',
  'gates:run': 'Run page-analysis gates',
  'secrets:list': 'List secrets and read their metadata (never their values)',
  'platform:read': "Read the platform's rate-limit status",
};

/**
 * The page; `message` shows an error above the form. Its CSP lets the form (and the redirect that answers it) reach
 * only this server and the redirect URI's origin: Chromium applies form-action to the redirect too.
 */
export function loginPage(client: Client, tx: AuthorizeTransaction, options: { message?: string; status?: number; username?: string } = {}): Reply {
  const scopes = tx.scopes
    .map((s) => `<li><code class="scope">${escapeHtml(s)}</code>${CONTEXT_SCOPE_DESCRIPTIONS[s] ? ` — ${escapeHtml(CONTEXT_SCOPE_DESCRIPTIONS[s])}` : ''}</li>`)
    .join('\n');
  const resource = tx.resource !== undefined ? `<p>On: <code id="resource">${escapeHtml(tx.resource)}</code></p>\n` : '';
  const error = options.message ? `<p class="error" id="error">${escapeHtml(options.message)}</p>\n` : '';
  const body = `${error}<p><strong id="client">${escapeHtml(client.name)}</strong> asks to act for you with these permissions:</p>
<ul id="scopes">
${scopes}
</ul>
${resource}<form method="post" action="/authorize/decision" class="login">
<style>.login input{font-size:1rem;letter-spacing:normal;width:100%;padding:.4rem;margin:.2rem 0 .6rem}</style>
<input type="hidden" name="transaction" value="${escapeHtml(tx.id)}">
<label for="username">Username or e-mail</label>
<input type="text" name="username" id="username" autocomplete="username" autocapitalize="off" spellcheck="false" value="${escapeHtml(options.username ?? '')}" autofocus>
<label for="password">Password</label>
<input type="password" name="password" id="password" autocomplete="current-password">
<button type="submit" name="decision" value="allow" id="allow">Allow</button>
<button type="submit" name="decision" value="deny" id="deny" formnovalidate>Deny</button>
</form>`;
  return page(`Sign in to allow ${client.name}`, body, options.status ?? 200, {
    'content-security-policy': `default-src 'none'; style-src 'unsafe-inline'; form-action 'self' ${new URL(tx.redirectUri).origin}`,
  });
}

/** A 400 page for a request that cannot go back to the client (unknown client, unregistered redirect URI, stale form). */
export function errorPage(message: string, status = 400): Reply {
  return page('Cannot continue', `<p class="error" id="error">${escapeHtml(message)}</p>`, status);
}
