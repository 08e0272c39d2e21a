import assert from 'node:assert/strict';
import { parseDuration, pulumiConfigFromEnvironment, resolveSecretsConfig } from '../../lib/secrets/config.js';
import { SecretsConfigError } from '../../lib/secrets/errors.js';

describe('secrets client configuration', () => {
  it('defaults: https://127.0.0.1:8200, no token, 2 retries, 60 s, waits 1-1.5 s, X-Secrets-Token', () => {
    const config = resolveSecretsConfig({}, { env: {}, pulumi: undefined });
    assert.equal(config.address, 'https://127.0.0.1:8200');
    assert.equal(config.token, undefined);
    assert.equal(config.maxRetries, 2);
    assert.equal(config.timeoutMs, 60_000);
    assert.equal(config.retryWaitMinMs, 1000);
    assert.equal(config.retryWaitMaxMs, 1500);
    assert.equal(config.tokenHeader, 'x-secrets-token');
    assert.equal(config.namespaceIn, 'header');
    assert.equal(config.skipVerify, false);
  });

  it('options win over the environment, which wins over Pulumi config', () => {
    const pulumi = (key: string) => ({ 'gantry:secretsAddr': 'http://pulumi:1', 'gantry:secretsToken': 'pulumi-token', 'gantry:secretsNamespace': 'pns', 'gantry:secretsMaxRetries': '7' } as Record<string, string>)[key];
    const env = { SECRETS_ADDR: 'http://env:2', SECRETS_TOKEN: 'env-token' };
    const fromAll = resolveSecretsConfig({ address: 'http://option:3' }, { env, pulumi });
    assert.equal(fromAll.address, 'http://option:3');
    assert.equal(fromAll.token, 'env-token');
    assert.equal(fromAll.namespace, 'pns/');
    assert.equal(fromAll.maxRetries, 7);
    assert.deepEqual([fromAll.sources.address, fromAll.sources.token, fromAll.sources.namespace, fromAll.sources.maxRetries], ['option', 'environment', 'pulumi', 'pulumi']);
    assert.equal(resolveSecretsConfig({}, { env: {}, pulumi }).address, 'http://pulumi:1');
  });

  it('reads every SECRETS_* variable', () => {
    const config = resolveSecretsConfig({}, {
      pulumi: undefined,
      env: {
        SECRETS_ADDR: 'https://vault.example:8200/', SECRETS_TOKEN: 't0k3n', SECRETS_NAMESPACE: '/team/a', SECRETS_CACERT: '/ca.pem', SECRETS_CAPATH: '/cas',
        SECRETS_CLIENT_CERT: '/c.pem', SECRETS_CLIENT_KEY: '/k.pem', SECRETS_SKIP_VERIFY: 'true', SECRETS_TLS_SERVER_NAME: 'vault.internal',
        SECRETS_MAX_RETRIES: '0', SECRETS_CLIENT_TIMEOUT: '1m30s',
      },
    });
    assert.equal(config.address, 'https://vault.example:8200');
    assert.equal(config.token, 't0k3n');
    assert.equal(config.namespace, 'team/a/');
    assert.equal(config.caCert, '/ca.pem');
    assert.equal(config.caPath, '/cas');
    assert.equal(config.clientCert, '/c.pem');
    assert.equal(config.clientKey, '/k.pem');
    assert.equal(config.skipVerify, true);
    assert.equal(config.tlsServerName, 'vault.internal');
    assert.equal(config.maxRetries, 0);
    assert.equal(config.timeoutMs, 90_000);
  });

  it('reads Pulumi config from PULUMI_CONFIG as the Pulumi runtime passes it', () => {
    const env = { PULUMI_CONFIG: JSON.stringify({ 'gantry:secretsAddr': 'http://127.0.0.1:9999', 'gantry:secretsSkipVerify': 'false' }) };
    assert.equal(pulumiConfigFromEnvironment(env)?.('gantry:secretsAddr'), 'http://127.0.0.1:9999');
    assert.equal(resolveSecretsConfig({}, { env }).address, 'http://127.0.0.1:9999');
    assert.equal(pulumiConfigFromEnvironment({ PULUMI_CONFIG: 'not json' }), undefined);
  });

  it('refuses bad values with the name of where they came from, never echoing a token', () => {
    assert.throws(() => resolveSecretsConfig({}, { env: { SECRETS_ADDR: 'not a url' }, pulumi: undefined }), (e: unknown) => e instanceof SecretsConfigError && /SECRETS_ADDR/.test(e.message));
    assert.throws(() => resolveSecretsConfig({}, { env: { SECRETS_ADDR: 'ftp://x' }, pulumi: undefined }), /http or https/);
    assert.throws(() => resolveSecretsConfig({}, { env: { SECRETS_ADDR: 'https://user:hunter22@x' }, pulumi: undefined }), (e: unknown) => e instanceof Error && !e.message.includes('hunter22'));
    assert.throws(() => resolveSecretsConfig({}, { env: { SECRETS_MAX_RETRIES: '-1' }, pulumi: undefined }), /SECRETS_MAX_RETRIES/);
    assert.throws(() => resolveSecretsConfig({}, { env: { SECRETS_MAX_RETRIES: 'two' }, pulumi: undefined }), /SECRETS_MAX_RETRIES/);
    assert.throws(() => resolveSecretsConfig({}, { env: { SECRETS_SKIP_VERIFY: 'yes please' }, pulumi: undefined }), /SECRETS_SKIP_VERIFY/);
    assert.throws(() => resolveSecretsConfig({}, { env: { SECRETS_CLIENT_TIMEOUT: '10 minutes' }, pulumi: undefined }), /SECRETS_CLIENT_TIMEOUT/);
    assert.throws(() => resolveSecretsConfig({ limits: { maxJsonDepth: 0 } }, { env: {}, pulumi: undefined }), /maxJsonDepth/);
  });

  it('durations: bare numbers are seconds in the environment, milliseconds as options', () => {
    assert.equal(parseDuration('30', 'x'), 30_000);
    assert.equal(parseDuration('500ms', 'x'), 500);
    assert.equal(parseDuration('1h2m3s', 'x'), 3_723_000);
    assert.equal(resolveSecretsConfig({ timeoutMs: 250 }, { env: {}, pulumi: undefined }).timeoutMs, 250);
  });
});
