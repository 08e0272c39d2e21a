import assert from 'node:assert/strict';
import { parseDuration, pulumiConfigFromEnvironment, resolveSecretsConfig, settings } from '../../lib/secrets/config.js';
import { defaultLimits } from '../../lib/secrets/limits.js';
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
    assert.deepEqual(config.limits, { ...defaultLimits });
  });

  it('options win over the environment, which wins over Pulumi config', () => {
    const pulumi = (key: string) =>
      (
        ({
          'gantry:secretsAddr': 'http://pulumi:1',
          'gantry:secretsToken': 'pulumi-token',
          'gantry:secretsNamespace': 'pns',
          'gantry:secretsMaxRetries': '7',
        }) as Record<string, string>
      )[key];
    const env = { SECRETS_ADDR: 'http://env:2', SECRETS_TOKEN: 'env-token' };
    const fromAll = resolveSecretsConfig({ address: 'http://option:3' }, { env, pulumi });
    assert.equal(fromAll.address, 'http://option:3');
    assert.equal(fromAll.token, 'env-token');
    assert.equal(fromAll.namespace, 'pns/');
    assert.equal(fromAll.maxRetries, 7);
    assert.deepEqual(
      [fromAll.sources.address, fromAll.sources.token, fromAll.sources.namespace, fromAll.sources.maxRetries],
      ['option', 'environment', 'pulumi', 'pulumi'],
    );
    assert.equal(resolveSecretsConfig({}, { env: {}, pulumi }).address, 'http://pulumi:1');
  });

  it('reads every SECRETS_* variable', () => {
    const config = resolveSecretsConfig(
      {},
      {
        pulumi: undefined,
        env: {
          SECRETS_ADDR: 'https://vault.example:8200/',
          SECRETS_TOKEN: 't0k3n',
          SECRETS_NAMESPACE: '/team/a',
          SECRETS_CACERT: '/ca.pem',
          SECRETS_CAPATH: '/cas',
          SECRETS_CLIENT_CERT: '/c.pem',
          SECRETS_CLIENT_KEY: '/k.pem',
          SECRETS_SKIP_VERIFY: 'true',
          SECRETS_TLS_SERVER_NAME: 'vault.internal',
          SECRETS_MAX_RETRIES: '0',
          SECRETS_CLIENT_TIMEOUT: '1m30s',
        },
      },
    );
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
    assert.throws(
      () => resolveSecretsConfig({}, { env: { SECRETS_ADDR: 'not a url' }, pulumi: undefined }),
      (e: unknown) => e instanceof SecretsConfigError && /SECRETS_ADDR/.test(e.message),
    );
    assert.throws(() => resolveSecretsConfig({}, { env: { SECRETS_ADDR: 'ftp://x' }, pulumi: undefined }), /http or https/);
    assert.throws(
      () => resolveSecretsConfig({}, { env: { SECRETS_ADDR: 'https://user:hunter22@x' }, pulumi: undefined }),
      (e: unknown) => e instanceof Error && !e.message.includes('hunter22'),
    );
    assert.throws(() => resolveSecretsConfig({}, { env: { SECRETS_MAX_RETRIES: '-1' }, pulumi: undefined }), /SECRETS_MAX_RETRIES/);
    assert.throws(() => resolveSecretsConfig({}, { env: { SECRETS_MAX_RETRIES: 'two' }, pulumi: undefined }), /SECRETS_MAX_RETRIES/);
    assert.throws(() => resolveSecretsConfig({}, { env: { SECRETS_SKIP_VERIFY: 'yes please' }, pulumi: undefined }), /SECRETS_SKIP_VERIFY/);
    assert.throws(() => resolveSecretsConfig({}, { env: { SECRETS_CLIENT_TIMEOUT: '10 minutes' }, pulumi: undefined }), /SECRETS_CLIENT_TIMEOUT/);
    assert.throws(() => resolveSecretsConfig({ limits: { maxJsonDepth: 0 } }, { env: {}, pulumi: undefined }), /maxJsonDepth/);
  });

  it('every setting has an environment variable SECRETS_* and a Pulumi key gantry:secrets*, each its own', () => {
    const all = Object.values(settings);
    for (const { env, pulumi } of all) {
      assert.match(env, /^SECRETS_[A-Z_]+$/);
      assert.match(pulumi, /^gantry:secrets[A-Z][A-Za-z]+$/);
    }
    assert.equal(new Set(all.map((s) => s.env)).size, all.length);
    assert.equal(new Set(all.map((s) => s.pulumi)).size, all.length);
  });

  describe('the token header, the namespace placement and the request limits', () => {
    const none = { env: {}, pulumi: undefined };
    const lookup = (map: Record<string, string>) => (key: string) => map[key];

    it('SEC-AUTH-TOKEN-HEADER, SEC-AUTH-BEARER: tokenHeader from the option, then SECRETS_TOKEN_HEADER, then gantry:secretsTokenHeader', () => {
      const pulumi = lookup({ 'gantry:secretsTokenHeader': 'authorization' });
      const env = { SECRETS_TOKEN_HEADER: 'X-Secrets-Token' };
      assert.equal(resolveSecretsConfig({}, { env: {}, pulumi }).tokenHeader, 'authorization');
      assert.equal(resolveSecretsConfig({}, { env: {}, pulumi }).sources.tokenHeader, 'pulumi');
      assert.equal(resolveSecretsConfig({}, { env, pulumi }).tokenHeader, 'x-secrets-token');
      assert.equal(resolveSecretsConfig({}, { env, pulumi }).sources.tokenHeader, 'environment');
      const fromOption = resolveSecretsConfig({ tokenHeader: 'authorization' }, { env, pulumi });
      assert.deepEqual([fromOption.tokenHeader, fromOption.sources.tokenHeader], ['authorization', 'option']);
      // any case, and `bearer` for the Authorization: Bearer form
      for (const value of ['Authorization', 'AUTHORIZATION', 'bearer', ' Bearer ']) {
        assert.equal(resolveSecretsConfig({}, { env: { SECRETS_TOKEN_HEADER: value }, pulumi: undefined }).tokenHeader, 'authorization', value);
      }
      assert.equal(resolveSecretsConfig({}, none).sources.tokenHeader, 'default');
    });

    it('SEC-NS-EQUIVALENCE: namespaceIn from the option, then SECRETS_NAMESPACE_IN, then gantry:secretsNamespaceIn', () => {
      const pulumi = lookup({ 'gantry:secretsNamespaceIn': 'path' });
      const env = { SECRETS_NAMESPACE_IN: 'Header' };
      assert.equal(resolveSecretsConfig({}, { env: {}, pulumi }).namespaceIn, 'path');
      assert.equal(resolveSecretsConfig({}, { env, pulumi }).namespaceIn, 'header');
      assert.equal(resolveSecretsConfig({ namespaceIn: 'path' }, { env, pulumi }).namespaceIn, 'path');
      assert.deepEqual(
        ['pulumi', 'environment', 'option'],
        [
          resolveSecretsConfig({}, { env: {}, pulumi }).sources.namespaceIn,
          resolveSecretsConfig({}, { env, pulumi }).sources.namespaceIn,
          resolveSecretsConfig({ namespaceIn: 'path' }, { env, pulumi }).sources.namespaceIn,
        ],
      );
    });

    it('SEC-LIMIT-REQUEST-SIZE, SEC-LIMIT-JSON-DEPTH, SEC-LIMIT-JSON-STRING-LENGTH, SEC-LIMIT-JSON-OBJECT-ENTRIES, SEC-LIMIT-JSON-ARRAY-ELEMENTS: each limit from the option, then SECRETS_MAX_*, then gantry:secretsMax*', () => {
      const pulumi = lookup({
        'gantry:secretsMaxRequestSize': '1000',
        'gantry:secretsMaxJsonDepth': '10',
        'gantry:secretsMaxJsonStringValueLength': '100',
        'gantry:secretsMaxJsonObjectEntryCount': '20',
        'gantry:secretsMaxJsonArrayElementCount': '30',
      });
      const fromPulumi = resolveSecretsConfig({}, { env: {}, pulumi });
      assert.deepEqual(fromPulumi.limits, {
        maxRequestBytes: 1000,
        maxJsonDepth: 10,
        maxJsonStringValueLength: 100,
        maxJsonObjectEntryCount: 20,
        maxJsonArrayElementCount: 30,
      });
      assert.equal(fromPulumi.sources.maxJsonDepth, 'pulumi');
      const env = {
        SECRETS_MAX_REQUEST_SIZE: '2000',
        SECRETS_MAX_JSON_DEPTH: '11',
        SECRETS_MAX_JSON_STRING_VALUE_LENGTH: '101',
        SECRETS_MAX_JSON_OBJECT_ENTRY_COUNT: '21',
        SECRETS_MAX_JSON_ARRAY_ELEMENT_COUNT: ' 31 ',
      };
      const fromEnv = resolveSecretsConfig({}, { env, pulumi });
      assert.deepEqual(fromEnv.limits, {
        maxRequestBytes: 2000,
        maxJsonDepth: 11,
        maxJsonStringValueLength: 101,
        maxJsonObjectEntryCount: 21,
        maxJsonArrayElementCount: 31,
      });
      assert.equal(fromEnv.sources.maxJsonArrayElementCount, 'environment');
      // per limit: an option for two of them, the environment for the rest; a limit may be raised above the default
      const mixed = resolveSecretsConfig({ limits: { maxJsonDepth: 600, maxRequestBytes: 64 * 1024 * 1024 } }, { env, pulumi });
      assert.deepEqual(mixed.limits, {
        maxRequestBytes: 67_108_864,
        maxJsonDepth: 600,
        maxJsonStringValueLength: 101,
        maxJsonObjectEntryCount: 21,
        maxJsonArrayElementCount: 31,
      });
      assert.deepEqual([mixed.sources.maxJsonDepth, mixed.sources.maxJsonStringValueLength], ['option', 'environment']);
      const partial = resolveSecretsConfig({}, { env: { SECRETS_MAX_JSON_DEPTH: '3' }, pulumi: undefined });
      assert.deepEqual(partial.limits, { ...defaultLimits, maxJsonDepth: 3 });
      assert.equal(partial.sources.maxRequestBytes, 'default');
    });

    it('refuses bad values naming the variable or key, and never echoes a long value', () => {
      const refused = (env: Record<string, string>, name: RegExp, pulumi?: Record<string, string>) =>
        assert.throws(
          () => resolveSecretsConfig({}, { env, pulumi: pulumi ? lookup(pulumi) : undefined }),
          (e: unknown) => e instanceof SecretsConfigError && e.exitCode === 2 && name.test(e.message),
        );
      refused({ SECRETS_TOKEN_HEADER: 'cookie' }, /^SECRETS_TOKEN_HEADER must be x-secrets-token or authorization .*got "cookie"$/);
      refused({ SECRETS_NAMESPACE_IN: 'query' }, /^SECRETS_NAMESPACE_IN must be header or path, got "query"$/);
      refused({}, /^gantry:secretsNamespaceIn must be header or path/, { 'gantry:secretsNamespaceIn': 'both' });
      refused({}, /^gantry:secretsTokenHeader must be/, { 'gantry:secretsTokenHeader': 'x-vault-token' });
      for (const bad of ['0', '-1', '1e3', '12abc', '1.5', '32MB', '0x10']) {
        refused({ SECRETS_MAX_JSON_DEPTH: bad }, /^SECRETS_MAX_JSON_DEPTH must be a whole number of at least 1, got "/);
      }
      refused({ SECRETS_MAX_REQUEST_SIZE: '32 MB' }, /^SECRETS_MAX_REQUEST_SIZE must be a whole number of bytes of at least 1, got "32 MB"$/);
      refused({ SECRETS_MAX_JSON_STRING_VALUE_LENGTH: 'x' }, /SECRETS_MAX_JSON_STRING_VALUE_LENGTH/);
      refused({ SECRETS_MAX_JSON_OBJECT_ENTRY_COUNT: '0' }, /SECRETS_MAX_JSON_OBJECT_ENTRY_COUNT/);
      refused(
        { SECRETS_MAX_JSON_ARRAY_ELEMENT_COUNT: '99999999999999999999' },
        /SECRETS_MAX_JSON_ARRAY_ELEMENT_COUNT must be a whole number of at least 1, got a value of 20 characters/,
      );
      refused({}, /^gantry:secretsMaxJsonArrayElementCount must be/, { 'gantry:secretsMaxJsonArrayElementCount': 'many' });
      // empty means unset, as for every other setting: the default applies
      assert.equal(resolveSecretsConfig({}, { env: { SECRETS_MAX_JSON_DEPTH: '', SECRETS_TOKEN_HEADER: '' }, pulumi: undefined }).limits.maxJsonDepth, 500);
      // a credential pasted into the wrong variable is described, not shown
      const canary = 'hvs.CAnaRY0123456789abcdef';
      for (const variable of ['SECRETS_TOKEN_HEADER', 'SECRETS_NAMESPACE_IN', 'SECRETS_MAX_REQUEST_SIZE', 'SECRETS_MAX_JSON_DEPTH']) {
        assert.throws(
          () => resolveSecretsConfig({}, { env: { [variable]: canary }, pulumi: undefined }),
          (e: unknown) => {
            assert.ok(e instanceof SecretsConfigError);
            assert.ok(e.message.startsWith(variable), e.message);
            assert.ok(!e.message.includes(canary) && !e.message.includes('CAnaRY'), e.message);
            assert.match(e.message, /a value of 26 characters/);
            return true;
          },
        );
      }
      // options are checked too, named as options
      assert.throws(() => resolveSecretsConfig({ tokenHeader: 'cookie' as never }, none), /option tokenHeader must be x-secrets-token or authorization/);
      assert.throws(() => resolveSecretsConfig({ namespaceIn: 'query' as never }, none), /option namespaceIn must be header or path/);
      assert.throws(() => resolveSecretsConfig({ limits: { maxRequestBytes: 1.5 } }, none), /option limits\.maxRequestBytes must be a whole number of bytes/);
      assert.throws(() => resolveSecretsConfig({ limits: { maxJsonObjectEntryCount: -3 } }, none), /option limits\.maxJsonObjectEntryCount/);
    });
  });

  it('durations: bare numbers are seconds in the environment, milliseconds as options', () => {
    assert.equal(parseDuration('30', 'x'), 30_000);
    assert.equal(parseDuration('500ms', 'x'), 500);
    assert.equal(parseDuration('1h2m3s', 'x'), 3_723_000);
    assert.equal(resolveSecretsConfig({ timeoutMs: 250 }, { env: {}, pulumi: undefined }).timeoutMs, 250);
  });
});
