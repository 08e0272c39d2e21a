import assert from 'node:assert/strict';
import https from 'node:https';
import { withServer, ROOT, type CallOptions, type CallResult } from './helpers.js';
import { makeTestPki } from '../../peers/tls.js';
import type { SecretsServer } from '../../../devserver/secrets/index.js';

describe('embedded kv server: sealed state, fault injection, TLS', () => {
  let server: SecretsServer;
  let call: (method: string, path: string, options?: CallOptions) => Promise<CallResult>;
  beforeEach(async () => ({ server, call } = await withServer()));
  afterEach(() => server.stop());

  it('SEC-STATE-SEALED-503 SEC-STATUS-503: while sealed every request gets 503; seal-status and unseal still answer', async () => {
    await call('POST', 'secret/data/s', { body: { data: { a: 1 } } });
    assert.equal((await call('PUT', 'sys/seal')).status, 204);
    const read = await call('GET', 'secret/data/s');
    assert.equal(read.status, 503);
    assert.equal(read.body.errors.length, 1);
    const write = await call('POST', 'secret/data/s', { body: { data: { a: 2 } } });
    assert.equal(write.status, 503);
    const status = await call('GET', 'sys/seal-status', { token: null });
    assert.equal(status.status, 200);
    assert.equal(status.body.sealed, true);
    assert.equal((await call('GET', 'sys/health', { token: null })).status, 503);
    const wrongKey = await call('PUT', 'sys/unseal', { token: null, body: { key: 'wrong' } });
    assert.equal(wrongKey.status, 400);
    const unsealed = await call('PUT', 'sys/unseal', { token: null, body: { key: server.unsealKey } });
    assert.equal(unsealed.status, 200);
    assert.equal(unsealed.body.sealed, false);
    const after = await call('GET', 'secret/data/s');
    assert.deepEqual(after.body.data.data, { a: 1 }, 'the write refused while sealed was not applied');
  });

  it('SEC-STATE-SEALED-503: sealing needs the root token (403 otherwise); seal() and unseal() drive it from a test', async () => {
    const token = (await call('POST', 'auth/token/create', { body: { policies: ['default'] } })).body.auth.client_token;
    assert.equal((await call('PUT', 'sys/seal', { token })).status, 403);
    server.seal();
    assert.equal((await call('GET', 'sys/seal-status')).body.sealed, true);
    assert.equal((await call('GET', 'kv/x')).status, 503);
    server.unseal();
    assert.equal((await call('GET', 'kv/x')).status, 404);
  });

  it('SEC-STATUS-412: an injected 412 answers the first matching request, then the request succeeds', async () => {
    server.setFaults([{ status: 412, method: 'GET', path: '/v1/secret/data/*', count: 1 }]);
    await call('POST', 'secret/data/f', { body: { data: { a: 1 } } });
    const first = await call('GET', 'secret/data/f');
    assert.equal(first.status, 412);
    assert.equal(typeof first.body.errors[0], 'string');
    assert.equal((await call('GET', 'secret/data/f')).status, 200);
    assert.deepEqual(server.faults()[0].count, 0);
  });

  it('SEC-STATUS-429: an injected 429 carries Retry-After', async () => {
    server.setFaults([{ status: 429, retryAfter: 2, count: 2 }]);
    const r = await call('GET', 'kv/x');
    assert.equal(r.status, 429);
    assert.equal(r.headers.get('retry-after'), '2');
    assert.equal((await call('GET', 'kv/x')).status, 429);
    assert.equal((await call('GET', 'kv/x')).status, 404);
  });

  it('SEC-STATUS-500 SEC-STATUS-502 SEC-STATUS-503: 5xx faults are scoped by method and path, and do not touch the data', async () => {
    server.setFaults([
      { status: 500, method: 'POST', path: '/v1/kv/a', count: 1 },
      { status: 502, method: 'GET', path: '/v1/kv/b' },
      { status: 503, method: 'LIST', retryAfter: 1, count: 1 },
    ]);
    assert.equal((await call('POST', 'kv/a', { body: { v: 1 } })).status, 500);
    assert.equal((await call('GET', 'kv/a')).status, 404, 'the faulted write was not applied');
    assert.equal((await call('POST', 'kv/a', { body: { v: 1 } })).status, 204);
    assert.equal((await call('GET', 'kv/b')).status, 502);
    assert.equal((await call('GET', 'kv/b')).status, 502, 'no count: until cleared');
    assert.equal((await call('LIST', 'kv/')).status, 503);
    assert.equal((await call('LIST', 'kv/')).status, 200);
  });

  it('latency and dropped connections can be injected', async () => {
    server.setFaults([
      { latencyMs: 300, path: '/v1/kv/slow', count: 1 },
      { reset: true, path: '/v1/kv/drop', count: 1 },
    ]);
    const started = Date.now();
    assert.equal((await call('GET', 'kv/slow')).status, 404);
    assert.ok(Date.now() - started >= 280);
    await assert.rejects(call('GET', 'kv/drop'));
    assert.equal((await call('GET', 'kv/drop')).status, 404);
  });

  it('faults are set at start and through the admin endpoint /_dev/faults (root token only)', async () => {
    const { server: s2, call: c2 } = await withServer({ faults: [{ status: 503, count: 1 }] });
    try {
      assert.equal((await c2('GET', 'kv/x')).status, 503);
      assert.equal((await c2('GET', 'kv/x')).status, 404);
      const denied = await fetch(`${s2.url}/_dev/faults`, { method: 'PUT', body: JSON.stringify({ faults: [] }) });
      assert.equal(denied.status, 403);
      const set = await fetch(`${s2.url}/_dev/faults`, {
        method: 'PUT',
        headers: { 'X-Secrets-Token': ROOT },
        body: JSON.stringify({ faults: [{ status: 429, retryAfter: 1, count: 1 }] }),
      });
      assert.equal(set.status, 204);
      assert.equal((await c2('GET', 'kv/x')).status, 429);
      const listed = (await (await fetch(`${s2.url}/_dev/faults`, { headers: { 'X-Secrets-Token': ROOT } })).json()) as { faults: unknown[] };
      assert.deepEqual(listed.faults, [{ status: 429, retryAfter: 1, count: 0 }]);
      const bad = await fetch(`${s2.url}/_dev/faults`, {
        method: 'PUT',
        headers: { 'X-Secrets-Token': ROOT },
        body: JSON.stringify({ faults: [{ status: 302 }] }),
      });
      assert.equal(bad.status, 400);
    } finally {
      await s2.stop();
    }
  });

  it('SEC-AUTH-TLS: with a certificate it serves HTTPS that a client verifying against the CA accepts', async () => {
    const pki = makeTestPki();
    const { server: tlsServer } = await withServer({ tls: { cert: pki.cert, key: pki.key } });
    try {
      assert.match(tlsServer.url, /^https:\/\/127\.0\.0\.1:\d+$/);
      const get = (options: https.RequestOptions) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const req = https.request(`${tlsServer.url}/v1/sys/seal-status`, options, (res) => {
            let body = '';
            res.on('data', (c) => (body += c));
            res.on('end', () => resolve({ status: res.statusCode!, body }));
          });
          req.on('error', reject);
          req.end();
        });
      const verified = await get({ ca: pki.ca });
      assert.equal(verified.status, 200);
      assert.equal(JSON.parse(verified.body).sealed, false);
      await assert.rejects(get({}), /self.signed|unable to verify|certificate/i, 'without the CA the certificate is not trusted');
      const list = await new Promise<number>((resolve, reject) => {
        const req = https.request(`${tlsServer.url}/v1/secret/metadata/`, { method: 'LIST', ca: pki.ca, headers: { 'X-Secrets-Token': ROOT } }, (res) => {
          res.resume();
          resolve(res.statusCode!);
        });
        req.on('error', reject);
        req.end();
      });
      assert.equal(list, 404, 'LIST works over TLS too (empty list)');
    } finally {
      await tlsServer.stop();
      pki.remove();
    }
  });
});
