import assert from 'node:assert/strict';
import { withServer, type CallOptions, type CallResult } from './helpers.js';
import type { SecretsServer } from '../../../devserver/secrets/index.js';

describe('embedded kv server: tokens, logins and policies', () => {
  let server: SecretsServer;
  let call: (method: string, path: string, options?: CallOptions) => Promise<CallResult>;
  before(
    async () =>
      ({ server, call } = await withServer({
        policies: {
          'app-reader': { 'secret/data/app/*': ['read'], 'secret/metadata/app/*': ['list', 'read'] },
          'app-creator': { 'secret/data/new/*': ['create'], 'kv/new/*': ['create'] },
          'app-writer': { path: { 'secret/data/app/*': { capabilities: ['create', 'read', 'update', 'patch', 'delete'] } } },
        },
        users: [{ username: 'alice', password: 'wonderland', policies: ['app-reader'] }],
        approles: [{ roleName: 'ci', roleId: 'role-ci', secretId: 'secret-ci', policies: ['app-writer'] }],
      })),
  );
  after(() => server.stop());

  const login = async (path: string, body: unknown) => {
    const r = await call('POST', path, { token: null, body });
    assert.equal(r.status, 200, r.text);
    return r;
  };

  it('SEC-AUTH-TOKEN-REQUIRED SEC-AUTH-403 SEC-STATUS-403: without a token, or with a wrong one, requests get 403 permission denied', async () => {
    await call('POST', 'secret/data/app/x', { body: { data: { a: 1 } } });
    const none = await call('GET', 'secret/data/app/x', { token: null });
    assert.equal(none.status, 403);
    assert.deepEqual(none.body, { errors: ['permission denied'] });
    const wrong = await call('GET', 'secret/data/app/x', { token: 'hvs.not-a-token' });
    assert.equal(wrong.status, 403);
    assert.deepEqual(wrong.body, { errors: ['permission denied'] });
  });

  it('SEC-AUTH-TOKEN-HEADER SEC-AUTH-BEARER SEC-HEADERS-SET: the token is accepted in X-Secrets-Token or Authorization: Bearer', async () => {
    assert.equal((await call('GET', 'secret/data/app/x')).status, 200);
    const bearer = await call('GET', 'secret/data/app/x', { token: null, headers: { Authorization: `Bearer ${server.rootToken}` } });
    assert.equal(bearer.status, 200);
  });

  it('SEC-AUTH-LOGIN-NO-AUTH SEC-AUTH-LOGIN-JSON SEC-LOGIN-ENDPOINTS-PER-METHOD: userpass logs in without a token and answers JSON with auth.client_token', async () => {
    const r = await login('auth/userpass/login/alice', { password: 'wonderland' });
    assert.match(String(r.headers.get('content-type')), /application\/json/);
    assert.equal(r.body.data, null);
    const auth = r.body.auth;
    assert.equal(typeof auth.client_token, 'string');
    assert.deepEqual(auth.policies, ['app-reader', 'default']);
    assert.deepEqual(auth.metadata, { username: 'alice' });
    assert.equal(auth.renewable, true);
    assert.equal(auth.lease_duration, 2764800);
    assert.equal(auth.token_type, 'service');
    const read = await call('GET', 'secret/data/app/x', { token: auth.client_token });
    assert.equal(read.status, 200);
  });

  it('SEC-AUTH-403: wrong credentials at a login endpoint give 403, with one message for an unknown user and a wrong password', async () => {
    const wrongPassword = await call('POST', 'auth/userpass/login/alice', { token: null, body: { password: 'nope' } });
    const unknownUser = await call('POST', 'auth/userpass/login/mallory', { token: null, body: { password: 'nope' } });
    assert.equal(wrongPassword.status, 403);
    assert.equal(unknownUser.status, 403);
    assert.deepEqual(wrongPassword.body, unknownUser.body);
    const badSecret = await call('POST', 'auth/approle/login', { token: null, body: { role_id: 'role-ci', secret_id: 'wrong' } });
    assert.equal(badSecret.status, 403);
  });

  it('SEC-LOGIN-ENDPOINTS-PER-METHOD: approle logs in with role_id and secret_id; role and secret ids can be issued by the root token', async () => {
    const r = await login('auth/approle/login', { role_id: 'role-ci', secret_id: 'secret-ci' });
    assert.deepEqual(r.body.auth.metadata, { role_name: 'ci' });
    assert.deepEqual(r.body.auth.policies, ['app-writer', 'default']);
    assert.equal((await call('POST', 'auth/approle/role/deploy', { body: { token_policies: ['app-reader'] } })).status, 204);
    const roleId = (await call('GET', 'auth/approle/role/deploy/role-id')).body.data.role_id;
    const secretId = (await call('POST', 'auth/approle/role/deploy/secret-id')).body.data.secret_id;
    const second = await login('auth/approle/login', { role_id: roleId, secret_id: secretId });
    assert.deepEqual(second.body.auth.policies, ['app-reader', 'default']);
  });

  it('SEC-STATUS-403 SEC-AUTH-403: a token without the capability gets 403 permission denied, and nothing changes', async () => {
    const reader = (await login('auth/userpass/login/alice', { password: 'wonderland' })).body.auth.client_token;
    const write = await call('POST', 'secret/data/app/x', { token: reader, body: { data: { hacked: true } } });
    assert.equal(write.status, 403);
    assert.deepEqual(write.body, { errors: ['permission denied'] });
    assert.equal((await call('GET', 'secret/data/other', { token: reader })).status, 403);
    assert.equal((await call('GET', 'nomount/x', { token: reader })).status, 403, 'a non-root token cannot probe for mounts');
    assert.notDeepEqual((await call('GET', 'secret/data/app/x')).body.data.data, { hacked: true });
    const list = await call('LIST', 'secret/metadata/app/', { token: reader });
    assert.equal(list.status, 200);
  });

  it('SEC-WRITE-EXISTENCE-CHECK: with create but not update, a new key can be written once and not overwritten', async () => {
    const token = (await call('POST', 'auth/token/create', { body: { policies: ['app-creator'] } })).body.auth.client_token;
    assert.equal((await call('POST', 'secret/data/new/k', { token, body: { data: { a: 1 } } })).status, 200);
    assert.equal((await call('POST', 'secret/data/new/k', { token, body: { data: { a: 2 } } })).status, 403);
    assert.equal((await call('POST', 'kv/new/k', { token, body: { a: 1 } })).status, 204);
    assert.equal((await call('POST', 'kv/new/k', { token, body: { a: 2 } })).status, 403);
  });

  it('SEC-HELP-PERMISSION: help is returned only with permission on the path (403 otherwise)', async () => {
    const reader = (await login('auth/userpass/login/alice', { password: 'wonderland' })).body.auth.client_token;
    assert.equal((await call('GET', 'secret/data/app/x?help=1', { token: reader })).status, 200);
    const denied = await call('GET', 'secret/data/other?help=1', { token: reader });
    assert.equal(denied.status, 403);
    assert.deepEqual(denied.body, { errors: ['permission denied'] });
    assert.equal((await call('GET', 'secret/data/app/x?help=1', { token: null })).status, 403);
  });

  it('token lookup-self and renew-self; the root token does not renew; revoke-self ends a token', async () => {
    const token = (await login('auth/userpass/login/alice', { password: 'wonderland' })).body.auth.client_token;
    const self = await call('GET', 'auth/token/lookup-self', { token });
    assert.equal(self.status, 200);
    assert.equal(self.body.data.id, token);
    assert.equal(self.body.data.display_name, 'userpass-alice');
    assert.equal(self.body.data.path, 'auth/userpass/login/alice');
    assert.ok(self.body.data.ttl > 0 && self.body.data.ttl <= 2764800);
    const renewed = await call('POST', 'auth/token/renew-self', { token, body: { increment: '1h' } });
    assert.equal(renewed.status, 200);
    assert.equal(renewed.body.auth.client_token, token);
    assert.ok(renewed.body.auth.lease_duration <= 3600 && renewed.body.auth.lease_duration > 3500);
    const root = await call('GET', 'auth/token/lookup-self');
    assert.deepEqual(root.body.data.policies, ['root']);
    assert.equal(root.body.data.ttl, 0);
    assert.equal((await call('POST', 'auth/token/renew-self')).status, 400);
    assert.equal((await call('POST', 'auth/token/revoke-self', { token })).status, 204);
    assert.equal((await call('GET', 'auth/token/lookup-self', { token })).status, 403);
  });

  it('an expired token is refused', async () => {
    const token = (await call('POST', 'auth/token/create', { body: { policies: ['app-reader'], ttl: '1s' } })).body.auth.client_token;
    assert.equal((await call('GET', 'secret/data/app/x', { token })).status, 200);
    await new Promise((r) => setTimeout(r, 1100));
    assert.equal((await call('GET', 'secret/data/app/x', { token })).status, 403);
  });

  it('policy patterns: + stands for one segment, * for a prefix; the most specific pattern wins and deny wins within it', async () => {
    await call('PUT', 'sys/policies/acl/patterns', {
      body: {
        policy: JSON.stringify({
          path: {
            'kv/+/db': { capabilities: ['read'] },
            'kv/team/*': { capabilities: ['read', 'list'] },
            'kv/team/secret': { capabilities: ['deny'] },
            'kv/+/cfg*': { capabilities: ['read'] },
          },
        }),
      },
    });
    const token = (await call('POST', 'auth/token/create', { body: { policies: ['patterns'] } })).body.auth.client_token;
    const caps = await call('POST', 'sys/capabilities-self', {
      token,
      body: { paths: ['kv/a/db', 'kv/a/b/db', 'kv/team/x', 'kv/team/secret', 'kv/team/db', 'kv/z/cfg-1', 'kv/z/cfg/deep', 'kv/cfg'] },
    });
    assert.deepEqual(caps.body.data, {
      'kv/a/db': ['read'],
      'kv/a/b/db': ['deny'],
      'kv/team/x': ['list', 'read'],
      'kv/team/secret': ['deny'],
      'kv/team/db': ['list', 'read'],
      'kv/z/cfg-1': ['read'],
      'kv/z/cfg/deep': ['read'],
      'kv/cfg': ['deny'],
    });
  });

  it('a token with num_uses ends after that many requests', async () => {
    const token = (await call('POST', 'auth/token/create', { body: { policies: ['app-reader'], num_uses: 2 } })).body.auth.client_token;
    assert.equal((await call('GET', 'secret/data/app/x', { token })).status, 200);
    assert.equal((await call('GET', 'secret/data/app/x', { token })).status, 200);
    assert.equal((await call('GET', 'secret/data/app/x', { token })).status, 403);
  });

  it('a token cannot create a child with policies it does not hold', async () => {
    const reader = (await login('auth/userpass/login/alice', { password: 'wonderland' })).body.auth.client_token;
    const child = await call('POST', 'auth/token/create', { token: reader, body: { policies: ['app-writer'] } });
    assert.equal(child.status, 403, 'the default policy does not grant auth/token/create');
  });

  it('ACL policies can be written at run time as JSON or HCL path blocks; sys/capabilities-self reports them', async () => {
    const put = await call('PUT', 'sys/policies/acl/runtime', {
      body: { policy: JSON.stringify({ path: { 'kv/rt/*': { capabilities: ['read', 'create'] } } }) },
    });
    assert.equal(put.status, 204);
    const token = (await call('POST', 'auth/token/create', { body: { policies: ['runtime'] } })).body.auth.client_token;
    assert.equal((await call('POST', 'kv/rt/a', { token, body: { a: 1 } })).status, 204);
    assert.equal((await call('GET', 'kv/rt/a', { token })).status, 200);
    assert.equal((await call('DELETE', 'kv/rt/a', { token })).status, 403);
    const hcl = [
      '# the usual HCL form',
      'path "kv/hcl/*" {',
      '  capabilities = ["read", "list"]',
      '}',
      'path "kv/hcl/w" { capabilities = ["create"] } // inline',
    ].join('\n');
    assert.equal((await call('PUT', 'sys/policies/acl/hcl', { body: { policy: hcl } })).status, 204);
    const hclToken = (await call('POST', 'auth/token/create', { body: { policies: ['hcl'] } })).body.auth.client_token;
    const caps = await call('POST', 'sys/capabilities-self', { token: hclToken, body: { paths: ['kv/hcl/a', 'kv/hcl/w', 'kv/other'] } });
    assert.equal(caps.status, 200);
    assert.deepEqual(caps.body.data, { 'kv/hcl/a': ['list', 'read'], 'kv/hcl/w': ['create'], 'kv/other': ['deny'] });
    for (const broken of ['path "x" { capabilities = ["fly"] }', 'path "x" { policy = "read" }', 'not a policy']) {
      const bad = await call('PUT', 'sys/policies/acl/broken', { body: { policy: broken } });
      assert.equal(bad.status, 400, broken);
    }
  });
});
