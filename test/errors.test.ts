import assert from 'node:assert/strict';
import { CheckFailedError, ExitCode, GantryError, UsageError } from '../lib/errors.js';
import { registerSecret } from '../lib/redact.js';

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
    const error = new UsageError('no token for secret/app; nothing was sent', { hint: 'Set SECRETS_TOKEN (export SECRETS_TOKEN=<token>), or send Authorization: Bearer <token>' });
    assert.equal(error.message, 'no token for secret/app; nothing was sent');
    assert.equal(error.hint, 'Set SECRETS_TOKEN (export SECRETS_TOKEN=<token>), or send Authorization: Bearer <token>');
  });
});
