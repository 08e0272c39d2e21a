import assert from 'node:assert/strict';
import { PageanalysisApiError } from '../lib/analysis/remote.js';
import { CheckFailedError, ExitCode, GantryError, UsageError } from '../lib/errors.js';
import { HttpError, ServiceError } from '../lib/http/errors.js';
import { PlatformApiError, PlatformCredentialsError } from '../lib/platform/errors.js';
import { registerSecret } from '../lib/redact.js';
import { SecretsError } from '../lib/secrets/errors.js';
import { StorageError } from '../lib/storage/errors.js';

// lib/errors.ts: the base every error Gantry throws on purpose stands on.

describe('errors: GantryError', () => {
  it('LAYER-ERRORS: GantryError redacts its message, hint and cliHint itself, whoever raises it', () => {
    const token = 'ghp_layerErrors0123456789abcdefXYZ';
    registerSecret(token);
    const error = new GantryError(`GET https://api.example/x?access_token=abc123def answered 401: bad token ${token}`, {
      exitCode: ExitCode.checkFailed,
      code: 'TEST_REDACTED',
      hint: `export SECRETS_TOKEN=${token} and try again`,
      cliHint: `run with Authorization: Bearer ${token}`,
    });
    for (const text of [error.message, error.hint!, error.cliHint!, String(error.stack)]) {
      assert.doesNotMatch(text, new RegExp(token), text);
      assert.doesNotMatch(text, /abc123def/, text);
    }
    assert.match(error.message, /access_token=\[REDACTED\] answered 401: bad token \[REDACTED\]$/);
    assert.equal(error.hint, 'export SECRETS_TOKEN=[REDACTED] and try again');
    assert.equal(error.cliHint, 'run with Authorization: Bearer [REDACTED]');
    // Subclasses go through the same constructor.
    assert.doesNotMatch(new UsageError(`bad flag --token=${token}`).message, new RegExp(token));
    assert.doesNotMatch(new CheckFailedError('no', { hint: `cookie: session=${token}` }).hint!, new RegExp(token));
  });

  it('LAYER-ERRORS: a message without credentials, and the placeholders hints use, are kept as they are', () => {
    const error = new UsageError('no token for secret/app; nothing was sent', {
      hint: 'Set SECRETS_TOKEN (export SECRETS_TOKEN=<token>), or send Authorization: Bearer <token>',
    });
    assert.equal(error.message, 'no token for secret/app; nothing was sent');
    assert.equal(error.hint, 'Set SECRETS_TOKEN (export SECRETS_TOKEN=<token>), or send Authorization: Bearer <token>');
  });
});

describe('errors: one service-error layer (HttpError, ServiceError)', () => {
  const url = 'https://service.example/v1/things/x';
  const notFound = (status: number) => ({
    secrets: new SecretsError({ status, method: 'GET', path: 'secret/data/app', errors: [], warnings: [], attempts: 3 }),
    platform: new PlatformApiError({ status, method: 'GET', url, body: { message: 'Not Found' }, attempts: 3 }),
    storage: new StorageError({ status, method: 'GET', url, body: { error: { message: 'File not found', errors: [{ reason: 'notFound' }] } }, attempts: 3 }),
    pageanalysis: new PageanalysisApiError(new HttpError({ status, method: 'GET', url, body: { error: { message: 'Not Found' } }, attempts: 3 })),
  });

  for (const [service, error] of Object.entries(notFound(404))) {
    it(`LAYER-ERRORS: new ${error.constructor.name}(…) instanceof HttpError (${service}), with status, method, url and attempts`, () => {
      assert.ok(error instanceof HttpError && error.status === 404, `${service}: instanceof HttpError and status 404`);
      assert.ok(error instanceof ServiceError);
      assert.equal(error.method, 'GET');
      assert.equal(error.attempts, 3);
      assert.match(error.url, /\/v1\//);
      assert.match(error.message, / answered 404 (?:to GET \/v1\/secret\/data\/app )?after 3 attempts/);
      assert.equal(error.exitCode, ExitCode.checkFailed);
      assert.ok(error.hint, `${service} has advice for a 404`);
    });
  }

  it('LAYER-ERRORS: every service\'s refusal exits by its status (4xx 1; 408, 429, 5xx 3); a 4xx the service means as "not now" is 3', () => {
    for (const status of [400, 403, 409, 408, 429, 500, 503]) {
      for (const [service, error] of Object.entries(notFound(status))) {
        assert.equal(error.exitCode, status >= 500 || status === 408 || status === 429 ? ExitCode.remote : ExitCode.checkFailed, `${service} ${status}`);
      }
    }
    const rateLimited = new StorageError({
      status: 403,
      method: 'GET',
      url,
      body: { error: { message: 'slow down', errors: [{ reason: 'userRateLimitExceeded' }] } },
    });
    assert.equal(rateLimited.exitCode, ExitCode.remote);
    assert.equal(new SecretsError({ status: 412, method: 'GET', path: 'secret/x', errors: [], warnings: [] }).exitCode, ExitCode.remote);
    assert.ok(new PlatformCredentialsError({ method: 'GET', url: 'https://api.platform.example/user' }) instanceof HttpError);
  });

  it("LAYER-ERRORS: a service's words are escaped to one line and its credentials redacted, in the message and what the error keeps", () => {
    const token = 'svc_layer_0123456789abcdef';
    registerSecret(token);
    const error = new PlatformApiError({
      status: 422,
      method: 'POST',
      url: `${url}?access_token=abc123def`,
      body: { message: `bad\nhint: forged ${token}`, errors: [{ message: `field ${token}` }], documentation_url: 'https://docs.example/x' },
    });
    assert.equal(error.message.split('\n').length, 1);
    assert.doesNotMatch(`${error.message} ${error.url} ${JSON.stringify(error.errors)} ${JSON.stringify(error.body)}`, new RegExp(`${token}|abc123def`));
    assert.match(error.hint!, /refused the request's content; see https:\/\/docs\.example\/x$/);
    assert.equal(error.code, 'PLATFORM_422');
  });
});
