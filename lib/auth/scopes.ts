/**
 * The device flow's scope allow-list (DEV-SCOPE-DEVICE-ALLOWED), checked before anything is sent: a scope the server
 * would refuse after the person has already typed the code is a wasted login.
 */
import { expectArray } from '../arguments.js';
import { UsageError } from '../errors.js';

/** `{scope_base}` of the scope URIs: Google's, unless GANTRY_OAUTH_SCOPE_BASE or --scope-base says otherwise. */
export const defaultScopeBase = 'https://www.googleapis.com';

const identityScopes = ['email', 'openid', 'profile'] as const;
/** The `{scope_base}/auth/<name>` scopes the device flow permits. */
export const deviceApiScopes = ['storage.appdata', 'storage.file', 'video', 'video.readonly'] as const;

/** What `gantry auth login` asks for without --scope: who the person is, the storage files Gantry writes, the video API's read. */
export const defaultScopeNames = ['openid', 'email', 'storage.file', 'video.readonly'];

export function allowedScopes(scopeBase = defaultScopeBase): string[] {
  return [...identityScopes, ...deviceApiScopes.map((name) => `${scopeBase}/auth/${name}`)];
}

export function checkScopeBase(raw: string, name = '--scope-base'): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`${name} "${raw.slice(0, 120)}" is not a URL`, { hint: `the prefix of the scope URIs, e.g. ${defaultScopeBase}` });
  }
  if (url.search || url.hash || (url.protocol !== 'https:' && url.protocol !== 'http:'))
    throw new UsageError(`${name} must be an http(s) URL without query or fragment, e.g. ${defaultScopeBase}`);
  return url.href.replace(/\/+$/, '');
}

/**
 * The scopes to request, in the order given, duplicates removed: full URIs as they are, and the short names
 * `video`, `video.readonly`, `storage.file`, `storage.appdata` expanded under the scope base. Anything outside the
 * allow-list is a usage error naming the allowed ones.
 */
export function resolveScopes(requested: readonly string[], scopeBase = defaultScopeBase): string[] {
  expectArray('resolveScopes', 'requested', requested, "an array of scopes, e.g. ['openid', 'video.readonly']");
  if (requested.some((entry) => typeof entry !== 'string')) throw new UsageError('resolveScopes: every scope must be a string');
  const words = requested.flatMap((entry) => entry.split(/[\s,]+/)).filter((word) => word !== '');
  if (words.length === 0) throw new UsageError('no scope requested', { hint: `ask for one or more of: ${allowedScopes(scopeBase).join(' ')}` });
  const allowed = new Set(allowedScopes(scopeBase));
  const out: string[] = [];
  const refused: string[] = [];
  for (const word of words) {
    const scope = (deviceApiScopes as readonly string[]).includes(word) ? `${scopeBase}/auth/${word}` : word;
    if (!allowed.has(scope)) refused.push(word);
    else if (!out.includes(scope)) out.push(scope);
  }
  if (refused.length > 0) {
    throw new UsageError(
      `the device flow does not permit ${refused.length === 1 ? 'the scope' : 'the scopes'} ${refused.map((s) => JSON.stringify(s.slice(0, 120))).join(', ')}`,
      {
        hint: `it permits only: ${[...identityScopes, ...deviceApiScopes].join(', ')} (the last four under ${scopeBase}/auth/)`,
        code: 'AUTH_SCOPE_NOT_ALLOWED',
      },
    );
  }
  return out;
}
