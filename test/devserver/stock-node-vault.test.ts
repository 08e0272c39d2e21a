// node-vault (the stock Vault client from npm) against the embedded kv server, with the spec's renamed headers set by
// the caller (X-Secrets-Token, X-Secrets-Request): listing by LIST and by GET ?list=1 (noCustomHTTPVerbs), sys/init
// without a token, health (and HEAD), the older sys/policy route, and mount tuning; then the wire details node-vault
// cannot express, with fetch: every boolean form of ?list= and the 400 for anything else.
import assert from 'node:assert/strict';
import vault from 'node-vault';
import { withServer, ROOT, type CallOptions, type CallResult } from './secrets/helpers.js';
import type { SecretsServer } from '../../devserver/secrets/index.js';

const headers = { 'X-Secrets-Token': ROOT, 'X-Secrets-Request': 'true' };

describe('DEV-STOCK-CLIENT: node-vault against gantry dev secrets', () => {
  let server: SecretsServer;
  let call: (method: string, path: string, options?: CallOptions) => Promise<CallResult>;
  beforeEach(async () => ({ server, call } = await withServer()));
  afterEach(() => server.stop());
  const client = (extra: Partial<vault.VaultOptions> = {}) =>
    vault({ endpoint: server.url, token: ROOT, requestOptions: { headers: { ...headers } }, ...extra });

  for (const noCustomHTTPVerbs of [false, true]) {
    it(`SEC-EP-LIST SEC-LIST-EMPTY-404 DEV-STOCK-CLIENT: list ${noCustomHTTPVerbs ? 'with noCustomHTTPVerbs (GET ?list=1)' : 'with the LIST method'} on kv v1 and on kv v2 metadata; an empty directory is 404`, async () => {
      const kv = client({ noCustomHTTPVerbs });
      await kv.write('kv/app/db', { password: 'p1' });
      await kv.write('kv/app/nested/one', { a: '1' });
      await kv.write('secret/data/team/api', { data: { key: 'k' } });
      assert.deepEqual((await kv.list('kv/app')).data.keys, ['db', 'nested/']);
      assert.deepEqual((await kv.list('secret/metadata/')).data.keys, ['team/']);
      assert.deepEqual((await kv.list('secret/metadata/team')).data.keys, ['api']);
      await assert.rejects(kv.list('kv/nothing'), (error: { response?: { statusCode: number } }) => error.response?.statusCode === 404);
    });
  }

  it('DEV-STOCK-CLIENT: initialized() asks sys/init without a token; status() and health() report the seal; sealed, health is 503 and node-vault still returns it', async () => {
    const anonymous = vault({ endpoint: server.url, requestOptions: { headers: { 'X-Secrets-Request': 'true' } } });
    assert.deepEqual(await anonymous.initialized(), { initialized: true });
    assert.equal((await anonymous.status()).sealed, false);
    const health = await anonymous.health();
    assert.deepEqual([health.initialized, health.sealed, health.standby], [true, false, false]);
    server.seal();
    assert.deepEqual(await anonymous.initialized(), { initialized: true }, 'answered while sealed');
    assert.equal((await anonymous.health()).sealed, true);
    await assert.rejects(anonymous.init({ secret_shares: 1, secret_threshold: 1 }), /already initialized/);
  });

  it('DEV-STOCK-CLIENT: policies through the older sys/policy route (addPolicy with rules, getPolicy, policies, removePolicy) are the ones of sys/policies/acl', async () => {
    const kv = client();
    const rules = 'path "kv/app/*" {\n  capabilities = ["read", "list"]\n}';
    await kv.addPolicy({ name: 'App-Reader', rules });
    const got = await kv.getPolicy({ name: 'app-reader' });
    assert.equal(got.data.name, 'app-reader');
    assert.match(got.data.rules, /kv\/app\/\*/);
    assert.equal(got.data.policy, undefined, 'the older route says rules');
    const listed = await kv.policies();
    assert.deepEqual(listed.data.keys, ['default', 'app-reader', 'root']);
    assert.deepEqual(listed.data.policies, listed.data.keys);
    const acl = await call('GET', 'sys/policies/acl/app-reader');
    assert.match(acl.body.data.policy, /kv\/app\/\*/);
    // The policy works: a token with it reads kv/app and nothing else.
    const token = (await call('POST', 'auth/token/create', { body: { policies: ['app-reader'] } })).body.auth.client_token as string;
    await kv.write('kv/app/db', { password: 'p1' });
    const reader = vault({ endpoint: server.url, token, requestOptions: { headers: { 'X-Secrets-Token': token } } });
    assert.equal((await reader.read('kv/app/db')).data.password, 'p1');
    await assert.rejects(reader.write('kv/app/db', { password: 'p2' }), /permission denied/);
    await kv.removePolicy({ name: 'app-reader' });
    assert.deepEqual((await kv.policies()).data.keys, ['default', 'root']);
    await assert.rejects(kv.getPolicy({ name: 'app-reader' }), (error: { response?: { statusCode: number } }) => error.response?.statusCode === 404);
  });

  it('DEV-STOCK-CLIENT: sys/mounts/<path>/tune reads the TTLs (768 h unset), sets description and TTLs, and upgrades kv v1 to v2 in place', async () => {
    const kv = client();
    const before = await kv.read('sys/mounts/kv/tune');
    assert.deepEqual(before.data, {
      default_lease_ttl: 2_764_800,
      max_lease_ttl: 2_764_800,
      force_no_cache: false,
      description: 'key/value secret storage (version 1)',
      options: { version: '1' },
    });
    await kv.write('kv/app/db', { password: 'p1' });
    await kv.write('sys/mounts/kv/tune', { description: 'team secrets', default_lease_ttl: '1h', max_lease_ttl: 7200, options: { version: '2' } });
    const after = await kv.read('sys/mounts/kv/tune');
    assert.deepEqual(after.data, {
      default_lease_ttl: 3600,
      max_lease_ttl: 7200,
      force_no_cache: false,
      description: 'team secrets',
      options: { version: '2' },
    });
    const mounts = await kv.mounts();
    assert.deepEqual([mounts.data['kv/'].config.default_lease_ttl, mounts.data['kv/'].options.version], [3600, '2']);
    const read = await kv.read('kv/data/app/db');
    assert.deepEqual([read.data.data, read.data.metadata.version], [{ password: 'p1' }, 1], 'the entry is version 1 of its key');
    await assert.rejects(kv.write('sys/mounts/kv/tune', { options: { version: '1' } }), /cannot downgrade/);
    await assert.rejects(kv.write('sys/mounts/kv/tune', { default_lease_ttl: '3h' }), /max lease TTL/);
    await assert.rejects(kv.read('sys/mounts/nothing/tune'), (error: { response?: { statusCode: number } }) => error.response?.statusCode === 400);
    const token = (await call('POST', 'auth/token/create', { body: { policies: ['default'] } })).body.auth.client_token as string;
    assert.equal((await call('POST', 'sys/mounts/kv/tune', { token, body: { description: 'x' } })).status, 403);
  });
});

describe('DEV-STOCK-CLIENT: the kv server reads ?list= as the service does, and answers HEAD sys/health', () => {
  let server: SecretsServer;
  let call: (method: string, path: string, options?: CallOptions) => Promise<CallResult>;
  before(async () => {
    ({ server, call } = await withServer());
    await call('POST', 'kv/dir/a', { body: { v: '1' } });
  });
  after(() => server.stop());

  it('SEC-EP-LIST DEV-STOCK-CLIENT: 1, t, T, TRUE, true and True list; 0, f, F, FALSE, false, False and empty read; anything else is 400', async () => {
    for (const value of ['1', 't', 'T', 'TRUE', 'true', 'True']) {
      const answer = await call('GET', `kv/dir?list=${value}`);
      assert.deepEqual([answer.status, answer.body?.data?.keys], [200, ['a']], `list=${value}`);
    }
    for (const value of ['0', 'f', 'F', 'FALSE', 'false', 'False', '']) {
      const answer = await call('GET', `kv/dir/a?list=${value}`);
      assert.deepEqual([answer.status, answer.body?.data], [200, { v: '1' }], `list=${value} reads`);
    }
    for (const value of ['yes', 'tRuE', 'on', '2', '%20true']) {
      const answer = await call('GET', `kv/dir?list=${value}`);
      assert.equal(answer.status, 400, `list=${value}`);
      assert.ok(Array.isArray(answer.body.errors));
    }
  });

  it("DEV-STOCK-CLIENT: HEAD sys/health answers GET's status and headers without a body (503 sealed); HEAD elsewhere is 405; sys/init takes no token and refuses a second init", async () => {
    const response = await fetch(`${server.url}/v1/sys/health`, { method: 'HEAD' });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/json');
    assert.equal(await response.text(), '');
    assert.equal((await fetch(`${server.url}/v1/kv/dir/a`, { method: 'HEAD', headers: { 'X-Secrets-Token': ROOT } })).status, 405);
    assert.deepEqual((await call('GET', 'sys/init', { token: null })).body, { initialized: true });
    const again = await call('PUT', 'sys/init', { token: null, body: { secret_shares: 1, secret_threshold: 1 } });
    assert.deepEqual([again.status, again.body.errors], [400, ['Vault is already initialized']]);
    server.seal();
    try {
      assert.equal((await fetch(`${server.url}/v1/sys/health`, { method: 'HEAD' })).status, 503);
      assert.equal((await call('GET', 'sys/init', { token: null })).status, 200);
    } finally {
      server.unseal();
    }
  });
});
