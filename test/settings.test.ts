import assert from 'node:assert/strict';
import { ExitCode, UsageError } from '../lib/errors.js';
import { closestKey, optionKeys, pulumiConfigFromEnvironment, refuseUnknownOptions, settingsReader } from '../lib/settings.js';
import { SecretsClient } from '../lib/secrets/index.js';

const table = {
  address: { env: 'X_ADDR', pulumi: 'gantry:xAddr' },
  token: { env: ['GANTRY_X_TOKEN', 'X_TOKEN'] },
} as const;

describe('settings resolver (lib/settings.ts)', () => {
  it('LAYER-SETTINGS: options win over the environment, which wins over Pulumi config, then the default', () => {
    const pulumi = (key: string) => (key === 'gantry:xAddr' ? 'http://pulumi' : undefined);
    const env = { X_ADDR: 'http://env' };
    const all = settingsReader(table, { env, pulumi });
    assert.deepEqual(all.pick('address', 'http://option'), { value: 'http://option', from: 'option address', origin: 'option' });
    assert.equal(all.sourceName('address'), 'option address');
    assert.deepEqual(all.pick('address', undefined), { value: 'http://env', from: 'X_ADDR', origin: 'environment' });
    const noEnv = settingsReader(table, { env: {}, pulumi });
    assert.deepEqual(noEnv.pick('address', ''), { value: 'http://pulumi', from: 'gantry:xAddr', origin: 'pulumi' });
    const none = settingsReader(table, { env: { X_ADDR: '' }, pulumi: undefined });
    assert.equal(none.pick('address', undefined), undefined);
    assert.equal(none.origins.address, 'default');
    assert.equal(none.sourceName('address'), undefined);
  });

  it('LAYER-SETTINGS: the first variable set wins among several; the command names an option by its flag', () => {
    const reader = settingsReader(table, { env: { X_TOKEN: 'b', GANTRY_X_TOKEN: 'a' }, pulumi: undefined, optionNames: { address: '--address' } });
    assert.equal(reader.text('token', undefined), 'a');
    assert.equal(settingsReader(table, { env: { X_TOKEN: 'b' }, pulumi: undefined }).text('token', undefined), 'b');
    assert.equal(reader.pick('address', 'http://x')?.from, '--address');
  });

  it('LAYER-SETTINGS: Pulumi config comes from PULUMI_CONFIG unless a lookup is given', () => {
    const env = { PULUMI_CONFIG: JSON.stringify({ 'gantry:xAddr': 'http://stack', 'gantry:n': 3 }) };
    assert.equal(settingsReader(table, { env }).text('address', undefined), 'http://stack');
    assert.equal(pulumiConfigFromEnvironment(env)?.('gantry:n'), '3');
    assert.equal(pulumiConfigFromEnvironment(env)?.('toString'), undefined);
    assert.equal(settingsReader(table, { env, pulumi: undefined }).text('address', undefined), undefined);
    assert.equal(pulumiConfigFromEnvironment({ PULUMI_CONFIG: '[1]' }), undefined);
  });

  it('LAYER-SETTINGS: an unknown option key is a usage error naming it and the closest known key', () => {
    const known = optionKeys<{ address?: string; token?: string; namespace?: string }>({ address: true, token: true, namespace: true });
    assert.deepEqual([...known], ['address', 'token', 'namespace']);
    assert.throws(() => refuseUnknownOptions('XClient', { adress: 'http://x' }, known), (e: unknown) => {
      assert.ok(e instanceof UsageError);
      assert.equal(e.exitCode, ExitCode.usage);
      assert.equal(e.code, 'UNKNOWN_OPTION');
      assert.match(e.message, /^XClient: unknown option "adress" in options \(did you mean "address"\?\)$/);
      assert.match(e.hint ?? '', /address, token, namespace/);
      return true;
    });
    assert.throws(() => refuseUnknownOptions('XClient', { colour: 1 }, known), (e: unknown) => e instanceof UsageError && !/did you mean/.test(e.message));
    assert.doesNotThrow(() => refuseUnknownOptions('XClient', { address: undefined, token: 't' }, known));
    assert.equal(closestKey('Namespace', known), 'namespace');
    assert.equal(closestKey('tokne', known), 'token');
  });

  it('LAYER-SETTINGS: new SecretsClient({ adress }) is refused rather than falling back to the default address', () => {
    assert.throws(() => new SecretsClient({ adress: 'http://127.0.0.1:1' } as never), (e: unknown) => e instanceof UsageError && e.exitCode === 2 && /"adress".*"address"/.test(e.message));
    assert.throws(() => new SecretsClient({ limits: { maxJsonDeph: 3 } } as never), (e: unknown) => e instanceof UsageError && /options\.limits.*"maxJsonDepth"/.test(e.message));
  });
});
