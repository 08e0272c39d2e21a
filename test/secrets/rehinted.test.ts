// A refusal of the secrets service told again with the caller's code and hint (lib/secrets/kv.ts `rehinted`): the kv
// engine's check-and-set refusals and the KvSecret provider's "run pulumi refresh" use it, rather than each copying
// the error's details field by field.
import assert from 'node:assert/strict';
import { ExitCode } from '../../lib/errors.js';
import { rehinted, SecretsError } from '../../lib/secrets/index.js';

describe('LAYER-SECRETS: rehinted', () => {
  const refusal = new SecretsError({
    status: 400,
    method: 'POST',
    path: 'secret/data/app',
    namespace: 'team',
    errors: ['check-and-set parameter did not match the current version'],
    warnings: ['a warning'],
    attempts: 2,
  });

  it('LAYER-SECRETS: keeps the request, the service’s words and the attempts; takes the new code and hint; the refusal is the cause', () => {
    const told = rehinted(refusal, { code: 'SECRETS_CAS_MISMATCH', hint: 'run `pulumi refresh`, then `pulumi up`.' });
    assert.ok(told instanceof SecretsError);
    assert.equal(told.code, 'SECRETS_CAS_MISMATCH');
    assert.equal(told.hint, 'run `pulumi refresh`, then `pulumi up`.');
    assert.equal(told.cause, refusal);
    assert.equal(told.message, refusal.message);
    assert.deepEqual(
      [told.status, told.method, told.path, told.namespace, told.attempts, [...told.errors], [...told.warnings]],
      [400, 'POST', 'secret/data/app', 'team', 2, [...refusal.errors], ['a warning']],
    );
    // A check-and-set refusal stays the service's definite "no".
    assert.equal(told.exitCode, ExitCode.checkFailed);
  });
});
