import assert from 'node:assert/strict';
import { withServer, type CallOptions, type CallResult } from './helpers.js';
import type { SecretsServer } from '../../../devserver/secrets/index.js';

describe('embedded kv server: namespaces', () => {
  let server: SecretsServer;
  let call: (method: string, path: string, options?: CallOptions) => Promise<CallResult>;
  before(
    async () =>
      ({ server, call } = await withServer({
        namespaces: ['ns1/ns2'],
        policies: { 'ns1/ns2/reader': { 'secret/data/*': ['read'] } },
        users: [{ username: 'bob', password: 'builder', policies: ['reader'], namespace: 'ns1/ns2' }],
      })),
  );
  after(() => server.stop());

  it('SEC-NS-RELATIVE SEC-NS-EQUIVALENCE SEC-NS-SPLIT-PREFIX: header ns1/ns2/ + secret/foo, path ns1/ns2/secret/foo and every split between them are one secret', async () => {
    const write = await call('POST', 'secret/data/foo', { namespace: 'ns1/ns2/', body: { data: { where: 'ns2' } } });
    assert.equal(write.status, 200);
    const forms: Array<[string | undefined, string]> = [
      ['ns1/ns2/', 'secret/data/foo'],
      ['ns1/ns2', 'secret/data/foo'],
      ['/ns1/ns2', 'secret/data/foo'],
      [undefined, 'ns1/ns2/secret/data/foo'],
      ['ns1/', 'ns2/secret/data/foo'],
      ['ns1', 'ns2/secret/data/foo'],
    ];
    for (const [namespace, path] of forms) {
      const r = await call('GET', path, namespace === undefined ? {} : { namespace });
      assert.equal(r.status, 200, `${namespace} + ${path}`);
      assert.deepEqual(r.body.data.data, { where: 'ns2' });
      assert.equal(r.body.data.metadata.version, 1, 'the same key, not a copy');
    }
    assert.equal((await call('GET', 'secret/data/foo')).status, 404, 'the root namespace has its own secret/ mount');
    assert.equal((await call('GET', 'secret/data/foo', { namespace: 'ns1/' })).status, 404, 'and so has ns1');
  });

  it('SEC-NS-RELATIVE: a token from a namespace login works in that namespace only, with policies relative to it', async () => {
    const login = await call('POST', 'auth/userpass/login/bob', { token: null, namespace: 'ns1/ns2', body: { password: 'builder' } });
    assert.equal(login.status, 200);
    const token = login.body.auth.client_token;
    assert.equal((await call('GET', 'secret/data/foo', { token, namespace: 'ns1/ns2' })).status, 200);
    assert.equal((await call('GET', 'ns1/ns2/secret/data/foo', { token })).status, 200);
    assert.equal((await call('GET', 'secret/data/foo', { token })).status, 403, 'not in the root namespace');
    assert.equal(
      (await call('POST', 'auth/userpass/login/bob', { token: null, body: { password: 'builder' } })).status,
      403,
      'the user exists only in ns1/ns2',
    );
  });

  it('SEC-NS-ENDPOINT-SCOPE: seal endpoints exist only in the root namespace', async () => {
    assert.equal((await call('GET', 'sys/seal-status')).status, 200);
    const scoped = await call('GET', 'sys/seal-status', { namespace: 'ns1/' });
    assert.equal(scoped.status, 404);
    assert.deepEqual(scoped.body, { errors: ['unsupported path'] });
    assert.equal((await call('PUT', 'sys/seal', { namespace: 'ns1/' })).status, 404);
    assert.equal(server.isSealed(), false);
  });

  it('namespaces can be created and listed at run time, and mount discovery answers inside them', async () => {
    const created = await call('POST', 'sys/namespaces/team', { namespace: 'ns1/' });
    assert.equal(created.status, 200);
    assert.equal(created.body.data.path, 'ns1/team/');
    const list = await call('LIST', 'sys/namespaces', { namespace: 'ns1/' });
    assert.deepEqual(list.body.data.keys, ['ns2/', 'team/']);
    const mount = await call('GET', 'sys/internal/ui/mounts/secret/x', { namespace: 'ns1/team' });
    assert.equal(mount.body.data.options.version, '2');
  });
});
