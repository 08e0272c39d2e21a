import assert from 'node:assert/strict';
import { ExitCode, UsageError } from '../lib/errors.js';
import { optionKeys, pulumiConfigFromEnvironment, refuseUnknownOptions, settingsReader } from '../lib/settings.js';
import { SecretsClient } from '../lib/secrets/index.js';
import { closestName } from '../lib/spelling.js';
import { PlatformApp, PlatformClient } from '../lib/platform/index.js';
import { createStorageClient } from '../lib/storage/index.js';
import { createEngine, createPageanalysisClient } from '../lib/analysis/index.js';
import { RegistryClient } from '../lib/registry/index.js';
import { WebhookReceiver } from '../lib/webhooks/index.js';

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
    assert.throws(
      () => refuseUnknownOptions('XClient', { adress: 'http://x' }, known),
      (e: unknown) => {
        assert.ok(e instanceof UsageError);
        assert.equal(e.exitCode, ExitCode.usage);
        assert.equal(e.code, 'UNKNOWN_OPTION');
        assert.match(e.message, /^XClient: unknown option "adress" in options \(did you mean "address"\?\)$/);
        assert.match(e.hint ?? '', /address, token, namespace/);
        return true;
      },
    );
    assert.throws(
      () => refuseUnknownOptions('XClient', { colour: 1 }, known),
      (e: unknown) => e instanceof UsageError && !/did you mean/.test(e.message),
    );
    assert.doesNotThrow(() => refuseUnknownOptions('XClient', { address: undefined, token: 't' }, known));
    assert.equal(closestName('Namespace', known), 'namespace');
    assert.equal(closestName('tokne', known), 'token');
  });

  it('LAYER-SETTINGS: new SecretsClient({ adress }) is refused rather than falling back to the default address', () => {
    assert.throws(
      () => new SecretsClient({ adress: 'http://127.0.0.1:1' } as never),
      (e: unknown) => e instanceof UsageError && e.exitCode === 2 && /"adress".*"address"/.test(e.message),
    );
    assert.throws(
      () => new SecretsClient({ limits: { maxJsonDeph: 3 } } as never),
      (e: unknown) => e instanceof UsageError && /options\.limits.*"maxJsonDepth"/.test(e.message),
    );
  });

  it('LAYER-SETTINGS: every client that takes settings refuses a mistyped option key (exit 2), naming the key it meant', () => {
    const cases: Array<[string, () => unknown, string]> = [
      ['PlatformClient', () => new PlatformClient({ baseURL: 'http://127.0.0.1:1', env: {} } as never), 'baseUrl'],
      ['PlatformApp', () => new PlatformApp({ appID: 1, env: {} } as never), 'appId'],
      ['createStorageClient', () => createStorageClient({ baseUrl: 'http://127.0.0.1:1', tokn: 't' } as never), 'token'],
      ['createEngine', () => createEngine({ baseurl: 'http://127.0.0.1:1', env: {} } as never), 'baseUrl'],
      ['createPageanalysisClient', () => createPageanalysisClient({ baseUrl: 'http://127.0.0.1:1', apikey: 'k' } as never), 'apiKey'],
      ['new RegistryClient', () => new RegistryClient({ token: {} } as never), 'tokens'],
      ['WebhookReceiver', () => new WebhookReceiver({ secret: 's' } as never), 'secrets'],
    ];
    for (const [where, make, meant] of cases) {
      assert.throws(
        make,
        (e: unknown) =>
          e instanceof UsageError && e.exitCode === ExitCode.usage && e.message.startsWith(`${where}: unknown option`) && e.message.includes(`"${meant}"`),
        where,
      );
    }
  });

  it('LAYER-SETTINGS: the platform and page-analysis clients read their stack configuration after the environment', () => {
    const PULUMI_CONFIG = JSON.stringify({ 'gantry:platformApiUrl': 'http://127.0.0.1:7/api', 'gantry:pageanalysisBaseUrl': 'http://127.0.0.1:8' });
    assert.equal(new PlatformClient({ env: { PULUMI_CONFIG } }).baseUrl, 'http://127.0.0.1:7/api');
    assert.equal(new PlatformClient({ env: { PULUMI_CONFIG, PLATFORM_API_URL: 'http://127.0.0.1:9' } }).baseUrl, 'http://127.0.0.1:9');
    assert.equal(createEngine({ env: { PULUMI_CONFIG } }).name, 'api');
    assert.equal(createEngine({ env: {} }).name, 'local');
  });
});
