// The token store's sub-paths (auth/token/<sub>) dispatched by the kit's RouteTable, keyed by operation: what each
// miss answers, and in which order the checks run (the operation before any policy, the policy before the path).
import assert from 'node:assert/strict';
import { withServer, type CallOptions, type CallResult } from './helpers.js';
import type { SecretsServer } from '../../../devserver/secrets/index.js';

describe('embedded kv server: auth/token/ routes on the route table', () => {
  let server: SecretsServer;
  let call: (method: string, path: string, options?: CallOptions) => Promise<CallResult>;
  let limited: string;
  before(async () => {
    ({ server, call } = await withServer({ policies: { reader: { 'secret/data/*': ['read'] } } }));
    const created = await call('POST', 'auth/token/create', { body: { policies: ['reader'] } });
    assert.equal(created.status, 200, created.text);
    limited = created.body.auth.client_token;
  });
  after(() => server.stop());

  it('LAYER-ROUTES: lookup-self answers read and write; renew-self, revoke-self and create only write', async () => {
    assert.equal((await call('GET', 'auth/token/lookup-self', { token: limited })).status, 200);
    assert.equal((await call('POST', 'auth/token/lookup-self', { token: limited })).status, 200);
    for (const [method, sub] of [
      ['GET', 'renew-self'],
      ['GET', 'revoke-self'],
      ['GET', 'create'],
      ['DELETE', 'lookup-self'],
    ]) {
      const r = await call(method!, `auth/token/${sub}`, { token: limited });
      assert.equal(r.status, 405, `${method} ${sub}: ${r.text}`);
      assert.deepEqual(r.body.errors, ['unsupported operation']);
    }
  });

  it('LAYER-ROUTES: a sub-path the token store does not have is checked against the policy first, then unsupported path (404)', async () => {
    const root = await call('GET', 'auth/token/lookup');
    assert.equal(root.status, 404, root.text);
    assert.deepEqual(root.body.errors, ['unsupported path']);
    for (const path of ['auth/token/lookup-self/', 'auth/token/', 'auth/token/Create']) assert.equal((await call('POST', path)).status, 404, path);
    assert.equal((await call('GET', 'auth/token/lookup', { token: limited })).status, 403);
  });
});
