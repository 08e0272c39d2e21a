import assert from 'node:assert/strict';
import http from 'node:http';
import { withServer, ENVELOPE_KEYS, ROOT, type CallOptions, type CallResult } from './helpers.js';
import type { SecretsServer } from '../../../devserver/secrets/index.js';

/** A raw request with node:http, for what fetch cannot express (bodies on LIST, chunked uploads). */
function raw(server: SecretsServer, method: string, path: string, body?: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; text: string; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
    const { hostname, port } = new URL(server.url);
    // host, port and path given apart: a URL string would have its dot segments normalised away
    const req = http.request({ host: hostname, port, path, method, headers: { 'X-Secrets-Token': ROOT, ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, text, headers: res.headers }));
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

describe('embedded kv server: API conventions and kv v1', () => {
  let server: SecretsServer;
  let call: (method: string, path: string, options?: CallOptions) => Promise<CallResult>;
  before(async () => ({ server, call } = await withServer()));
  after(() => server.stop());

  it('SEC-MOUNT-DEFAULT-SECRET: a fresh server has secret/ (kv, version 2) and kv/ (kv, version 1), found with sys/internal/ui/mounts', async () => {
    const secret = await call('GET', 'sys/internal/ui/mounts/secret/app/db');
    assert.equal(secret.status, 200);
    assert.equal(secret.body.data.type, 'kv');
    assert.equal(secret.body.data.path, 'secret/');
    assert.equal(secret.body.data.options.version, '2');
    const kv = await call('GET', 'sys/internal/ui/mounts/kv');
    assert.equal(kv.body.data.options.version, '1');
    const none = await call('GET', 'sys/internal/ui/mounts/nothing/here');
    assert.equal(none.status, 403, 'an unknown mount looks like a forbidden one');
    assert.match(none.body.errors[0], /preflight capability check returned 403/);
  });

  it('SEC-KV1-PATH SEC-EP-WRITE SEC-STATUS-204: kv v1 stores any JSON object at <mount>/<name>; POST and PUT are synonyms with no body', async () => {
    const post = await call('POST', 'kv/app/config', { body: { url: 'https://x', n: 3, nested: { deep: [1, 2] } } });
    assert.equal(post.status, 204);
    assert.equal(post.text, '');
    const read = await call('GET', 'kv/app/config');
    assert.equal(read.status, 200);
    assert.deepEqual(read.body.data, { url: 'https://x', n: 3, nested: { deep: [1, 2] } });
    assert.equal(read.body.lease_duration, 2764800, 'kv v1 reads carry the default lease ttl as a refresh hint');
    assert.equal((await call('PUT', 'kv/app/config', { body: { url: 'https://y' } })).status, 204);
    assert.deepEqual((await call('GET', 'kv/app/config')).body.data, { url: 'https://y' }, 'a write replaces the object');
    const empty = await call('POST', 'kv/app/empty', { body: {} });
    assert.equal(empty.status, 400);
    assert.deepEqual(empty.body, { errors: ['missing data fields'] });
    assert.equal((await call('DELETE', 'kv/app/config')).status, 204);
    assert.equal((await call('GET', 'kv/app/config')).status, 404);
  });

  it('SEC-EP-LIST SEC-LIST-EMPTY-404: LIST and GET ?list=true return the keys of a directory; an empty directory is 404 {errors: []}', async () => {
    await call('POST', 'kv/dir/a', { body: { v: 1 } });
    await call('POST', 'kv/dir/b/c', { body: { v: 1 } });
    const viaList = await call('LIST', 'kv/dir/');
    assert.equal(viaList.status, 200);
    assert.deepEqual(viaList.body.data.keys, ['a', 'b/']);
    assert.deepEqual((await call('GET', 'kv/dir?list=true')).body.data.keys, ['a', 'b/'], 'without a trailing slash too');
    const rawList = await raw(server, 'LIST', '/v1/kv/dir/b/');
    assert.equal(rawList.status, 200);
    assert.deepEqual(JSON.parse(rawList.text).data.keys, ['c']);
    const empty = await call('LIST', 'kv/empty/');
    assert.equal(empty.status, 404);
    assert.deepEqual(empty.body, { errors: [] });
  });

  it('LIST works on a kept-alive connection after a request with a body and after a chunked upload', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const send = (method: string, path: string, body?: string, headers: Record<string, string> = {}) =>
      new Promise<number>((resolve, reject) => {
        const req = http.request(`${server.url}${path}`, { method, agent, headers: { 'X-Secrets-Token': ROOT, ...headers } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        });
        req.on('error', reject);
        if (body !== undefined) req.write(body);
        req.end();
      });
    try {
      assert.equal(await send('POST', '/v1/kv/ka/one', JSON.stringify({ text: 'LIST /v1/kv/ HTTP/1.1\r\n\r\n' })), 204);
      assert.equal(await send('LIST', '/v1/kv/ka/'), 200);
      assert.equal(await send('POST', '/v1/kv/ka/two', JSON.stringify({ a: 1 }), { 'Transfer-Encoding': 'chunked' }), 204);
      assert.equal(await send('LIST', '/v1/kv/ka/'), 200);
      assert.deepEqual((await call('LIST', 'kv/ka/')).body.data.keys, ['one', 'two']);
    } finally {
      agent.destroy();
    }
  });

  it('SEC-PATH-TRAILING-PERIOD: a path segment ending in a period is 404 unsupported path, and nothing is written', async () => {
    for (const path of ['secret/data/app.', 'kv/app.', 'kv/a./b', 'secret/data/../x', 'kv/./x', 'kv/%2E%2E/x']) {
      const r = await raw(server, 'POST', `/v1/${path}`, JSON.stringify({ data: { a: 1 }, a: 1 }));
      assert.equal(r.status, 404, path);
      assert.deepEqual(JSON.parse(r.text), { errors: ['unsupported path'] }, path);
    }
    assert.equal((await call('GET', 'secret/data/app.')).status, 404);
    assert.equal((await call('LIST', 'kv/')).body.data.keys.includes('app.'), false);
  });

  it('SEC-API-PREFIX-V1 SEC-VER-V1-ONLY: only /v1/ routes exist', async () => {
    const v2 = await fetch(`${server.url}/v2/secret/data/x`, { headers: { 'X-Secrets-Token': ROOT } });
    assert.equal(v2.status, 404);
    assert.deepEqual(await v2.json(), { errors: [] });
    const bare = await fetch(`${server.url}/secret/data/x`, { headers: { 'X-Secrets-Token': ROOT } });
    assert.equal(bare.status, 404);
  });

  it('SEC-API-JSON SEC-CONTENT-TYPE-SERVER: bodies need no Content-Type from the client; the server labels every JSON reply', async () => {
    const r = await raw(server, 'POST', '/v1/secret/data/ct', JSON.stringify({ data: { a: 1 } }));
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^application\/json/);
    const bad = await raw(server, 'POST', '/v1/secret/data/ct', '{not json');
    assert.equal(bad.status, 400);
    assert.match(String(bad.headers['content-type']), /^application\/json/);
    assert.deepEqual(JSON.parse(bad.text), { errors: ['error parsing JSON'] });
    const notObject = await raw(server, 'POST', '/v1/kv/ct', '[1,2]');
    assert.equal(notObject.status, 400);
  });

  it('SEC-ERR-BODY: every status of 400 or above has a body {errors: [string...]}', async () => {
    const responses = [
      await call('GET', 'secret/data/none'),
      await call('POST', 'secret/data/x', { body: { data: 'nope' } }),
      await call('GET', 'secret/data/x', { token: 'wrong' }),
      await call('HEAD', 'secret/data/x').catch(() => undefined),
      await call('GET', 'nomount/x'),
      await call('PATCH', 'kv/x', { body: { a: 1 }, headers: { 'Content-Type': 'application/merge-patch+json' } }),
    ].filter((r): r is CallResult => r !== undefined && r.status >= 400 && r.text !== '');
    assert.ok(responses.length >= 5);
    for (const r of responses) {
      assert.ok(Array.isArray(r.body.errors), `${r.status} ${r.text}`);
      for (const e of r.body.errors) assert.equal(typeof e, 'string');
    }
  });

  it('SEC-STATUS-405: a method the path does not support is 405', async () => {
    const r = await call('PATCH', 'kv/x', { body: { a: 1 }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    assert.equal(r.status, 405);
    assert.deepEqual(r.body, { errors: ['unsupported operation'] });
    assert.equal((await call('DELETE', 'sys/seal-status')).status, 405);
    assert.equal((await call('OPTIONS', 'secret/data/x')).status, 405);
  });

  it('SEC-STATUS-404: a path with no mount is 404 for the root token', async () => {
    const r = await call('GET', 'nomount/x');
    assert.equal(r.status, 404);
    assert.match(r.body.errors[0], /no handler for route/);
  });

  it('SEC-EP-HELP SEC-HELP-RESPONSE-SHAPE SEC-HELP-OPENAPI-DOC: ?help=1 answers {help, openapi} with an OpenAPI 3.0.2 document whose paths are relative to the queried path', async () => {
    const mount = await call('GET', 'secret/?help=1');
    assert.equal(mount.status, 200);
    assert.equal(typeof mount.body.help, 'string');
    assert.match(mount.body.help, /## DESCRIPTION/);
    assert.equal(mount.body.openapi.openapi, '3.0.2');
    const paths = Object.keys(mount.body.openapi.paths).sort();
    assert.deepEqual(paths, ['/config', '/data/{path}', '/delete/{path}', '/destroy/{path}', '/metadata/{path}', '/undelete/{path}']);
    const data = await call('GET', 'secret/data/?help=1');
    assert.deepEqual(Object.keys(data.body.openapi.paths), ['/{path}']);
    const one = await call('GET', 'secret/data/app/db?help=1');
    assert.deepEqual(Object.keys(one.body.openapi.paths), ['/']);
    assert.ok(one.body.openapi.paths['/'].get && one.body.openapi.paths['/'].post && one.body.openapi.paths['/'].delete);
    const v1 = await call('GET', 'kv/?help=1');
    assert.deepEqual(Object.keys(v1.body.openapi.paths), ['/{path}']);
    for (const key of ENVELOPE_KEYS) assert.ok(!(key in mount.body) || key === 'data', 'help is not wrapped in the envelope');
  });
});
