/**
 * The device login's outcomes as typed errors. Each OAuth error of the spec's table is its own code and message, with
 * what to do next; none carries a token (messages pass through the redactor).
 */
import { terminalText } from '../terminal-text.js';
import { ExitCode, bothFaces, type ExitCodeValue } from '../errors.js';
import { ProtocolError } from '../http/index.js';
import { OAuthError, OAuthFlowError, oauthErrorCodes, type OAuthFlowErrorOptions } from '../oauth/index.js';

/**
 * Each code a device login ends with, and its exit code: a definite "no" is 1, the authorization server failing 3.
 * Where the server's status decides (`AUTH_SERVER`, `AUTH_REVOKE_FAILED`), the raising code passes it.
 */
export const deviceLoginErrorCodes = {
  AUTH_ACCESS_DENIED: ExitCode.checkFailed,
  AUTH_EXPIRED: ExitCode.checkFailed,
  AUTH_ADMIN_POLICY: ExitCode.checkFailed,
  AUTH_INVALID_CLIENT: ExitCode.checkFailed,
  AUTH_INVALID_GRANT: ExitCode.checkFailed,
  AUTH_UNSUPPORTED_GRANT_TYPE: ExitCode.checkFailed,
  AUTH_ORG_INTERNAL: ExitCode.checkFailed,
  AUTH_INVALID_SCOPE: ExitCode.checkFailed,
  AUTH_QUOTA: ExitCode.remote,
  AUTH_REFRESH_REVOKED: ExitCode.checkFailed,
  AUTH_NOT_LOGGED_IN: ExitCode.checkFailed,
  AUTH_REVOKE_FAILED: ExitCode.checkFailed,
  AUTH_CANCELLED: ExitCode.checkFailed,
  AUTH_SERVER: ExitCode.checkFailed,
} as const satisfies Record<string, ExitCodeValue>;
export type DeviceLoginErrorCode = keyof typeof deviceLoginErrorCodes;

/** Every `code` the auth area raises: a device login's, and its stores' and settings' (test/architecture/exit-codes.test.ts holds lib/ and providers/ to it). */
export const authErrorCodes = [
  ...(Object.keys(deviceLoginErrorCodes) as DeviceLoginErrorCode[]),
  'AUTH_CLIENT_ID',
  'AUTH_FILE',
  'AUTH_FILE_PERMISSIONS',
  'AUTH_INDEX_CORRUPT',
  'AUTH_KEYRING',
  'AUTH_KEYRING_UNREACHABLE',
  'AUTH_KV_NOT_CONFIGURED',
  'AUTH_NO_SAFE_STORE',
  'AUTH_PROFILE',
  'AUTH_SCOPE_NOT_ALLOWED',
  'AUTH_STORE_CORRUPT',
  'AUTH_STORE_MISMATCH',
  'AUTH_STORE_SPEC',
  'AUTH_URL',
] as const;
export type AuthErrorCode = (typeof authErrorCodes)[number];

/** A device login's outcome; its exit code is its code's (`deviceLoginErrorCodes`) unless the server's status decides. */
export class DeviceLoginError extends OAuthFlowError<DeviceLoginErrorCode> {
  constructor(message: string, options: OAuthFlowErrorOptions<DeviceLoginErrorCode>) {
    super(message, options, deviceLoginErrorCodes);
  }
}

interface Known {
  code: DeviceLoginErrorCode;
  message: string;
  hint: string;
  /** The hint in the command's words, where it names a setting. */
  cliHint?: string;
  exitCode?: ExitCodeValue;
}

/** "check the authorization server address: …", naming the setting as each face does. */
export function checkAuthServer(why: string): { hint: string; cliHint: string } {
  return bothFaces(
    (name) => `check ${name}: ${why}`,
    'the authorization server address (the authUrl option, GANTRY_AUTH_URL)',
    '--auth-url (or GANTRY_AUTH_URL)',
  );
}

const fewerScopes = bothFaces((name) => `ask for fewer scopes (${name}), ones this client may have`, 'resolveScopes', '--scope');

/** What each error of the spec's poll table (and RFC 8628's `expired_token`) means to the person at the terminal. */
const pollErrors: Record<string, Known> = {
  access_denied: { code: 'AUTH_ACCESS_DENIED', message: 'access was denied on the approval page', hint: 'run `gantry auth login` again and choose Allow' },
  expired_token: {
    code: 'AUTH_EXPIRED',
    message: 'the code expired before it was approved',
    hint: 'run `gantry auth login` again and enter the new code sooner',
  },
  admin_policy_enforced: {
    code: 'AUTH_ADMIN_POLICY',
    message: "the account's administrator does not allow one of the requested scopes",
    ...bothFaces((name) => `ask the administrator to allow the scopes, or log in with fewer (${name})`, 'resolveScopes', '--scope'),
  },
  invalid_client: {
    code: 'AUTH_INVALID_CLIENT',
    message: 'the authorization server refused the client: an unknown client id, a wrong client secret, or a client of the wrong type',
    ...bothFaces(
      (secret) => `check the client id and its secret (${secret}); the client must be a "TVs and Limited Input devices" client — create one if it is not`,
      'the clientId and clientSecret options, GANTRY_OAUTH_CLIENT_ID and GANTRY_OAUTH_CLIENT_SECRET',
      '--client-id or GANTRY_OAUTH_CLIENT_ID, --client-secret-file or GANTRY_OAUTH_CLIENT_SECRET',
    ),
  },
  invalid_grant: { code: 'AUTH_INVALID_GRANT', message: 'the device code is invalid or was already used', hint: 'run `gantry auth login` again' },
  unsupported_grant_type: {
    code: 'AUTH_UNSUPPORTED_GRANT_TYPE',
    message: 'the authorization server does not support the device grant at this token endpoint',
    ...checkAuthServer('it must be a server with the OAuth 2.0 device authorization grant'),
  },
  org_internal: {
    code: 'AUTH_ORG_INTERNAL',
    message: "this client belongs to a project limited to one organization's accounts, and the account chosen is outside it",
    hint: "approve with an account of that organization, or use a client that isn't internal",
  },
  invalid_scope: { code: 'AUTH_INVALID_SCOPE', message: 'the authorization server refused the requested scopes', ...fewerScopes },
  unauthorized_client: {
    code: 'AUTH_INVALID_CLIENT',
    message: 'this client may not use the device grant',
    hint: 'create a "TVs and Limited Input devices" OAuth client and use its id',
  },
};

/** The error for an OAuth `error` the server answered with. */
export function oauthError(error: string, description: string | undefined, status: number): DeviceLoginError {
  const known = pollErrors[error];
  const said = terminalText(description && description !== error ? ` (${description.slice(0, 200)})` : '');
  if (known)
    return new DeviceLoginError(`${known.message}: ${error}${said}`, {
      code: known.code,
      hint: known.hint,
      ...(known.cliHint ? { cliHint: known.cliHint } : {}),
      oauthError: error,
      status,
      ...(known.exitCode !== undefined ? { exitCode: known.exitCode } : {}),
    });
  return new DeviceLoginError(`the authorization server answered ${status} ${terminalText(error)}${said}`, {
    code: 'AUTH_SERVER',
    oauthError: error,
    status,
    exitCode: status >= 500 ? ExitCode.remote : ExitCode.checkFailed,
    ...checkAuthServer('is it the right server, and the client id one it knows?'),
  });
}

export function expiredError(): DeviceLoginError {
  return new DeviceLoginError('the code expired before it was approved: run `gantry auth login` again', {
    code: 'AUTH_EXPIRED',
    oauthError: 'expired_token',
    hint: 'enter the code on the approval page before it expires',
  });
}

/**
 * The OAuth core's neutral error in the device login's terms: an error body the server sent is its AUTH_* code (the
 * table above); an answer or metadata that breaks the protocol stays what lib/http calls it, a ProtocolError (3).
 * Anything else passes unchanged.
 */
export function fromOAuth(error: unknown): unknown {
  if (!(error instanceof OAuthError)) return error;
  if (error.code === oauthErrorCodes.errorResponse && error.error !== undefined) return oauthError(error.error, error.description, error.status ?? 400);
  return new ProtocolError(error.message, error.hint ?? checkAuthServer('it does not speak the OAuth 2.0 device grant as expected'));
}
