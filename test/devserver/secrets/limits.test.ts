import assert from 'node:assert/strict';
import http from 'node:http';
import { withServer, ROOT, type CallOptions, type CallResult } from './helpers.js';
import type { SecretsServer } from '../../../devserver/secrets/index.js';

describe('embedded kv server: request size and JSON limits, request header', () => {
  let server: SecretsServer;
  let call: (method: string, path: string, options?: CallOptions) => Promise<CallResult>;
  before(async () => ({ server, call } = await withServer()));
  after(() => server.stop());

  it('SEC-LIMIT-REQUEST-SIZE: a body above 32 MB is refused with 413 and nothing is stored', async () => {
    const big = `{"data":{"blob":"${'x'.repeat(32 * 1024 * 1024)}"}}`;
    const r = await call('POST', 'secret/data/big', { raw: big });
    assert.equal(r.status, 413);
    assert.ok(Array.isArray(r.body.errors) && r.body.errors.length === 1);
    assert.equal((await call('GET', 'secret/data/big')).status, 404);
  });

  it('SEC-LIMIT-REQUEST-SIZE: the limit is configurable, and a chunked body without Content-Length is counted too', async () => {
    const { server: small } = await withServer({ maxRequestSize: 1024 });
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.request(
          `${small.url}/v1/kv/chunked`,
          { method: 'POST', headers: { 'X-Secrets-Token': ROOT, 'Transfer-Encoding': 'chunked' } },
          (res) => {
            res.resume();
            resolve(res.statusCode!);
          },
        );
        req.on('error', reject);
        for (let i = 0; i < 8; i++) req.write(`{"k${i}":"${'y'.repeat(200)}"}`.slice(0, 200));
        req.end();
      });
      assert.equal(status, 413);
      const ok = await fetch(`${small.url}/v1/kv/fits`, { method: 'POST', headers: { 'X-Secrets-Token': ROOT }, body: JSON.stringify({ a: 'b' }) });
      assert.equal(ok.status, 204);
    } finally {
      await small.stop();
    }
  });

  const nested = (depth: number) => '{"data":' + '['.repeat(depth) + ']'.repeat(depth) + '}';

  it('SEC-LIMIT-JSON-DEPTH: nesting beyond max_json_depth (default 500) is refused with 400', async () => {
    // 500 levels exactly: accepted by the limit check (then refused because data is an array, not an object)
    const ok = await call('POST', 'secret/data/deep', { raw: nested(499) });
    assert.equal(ok.status, 400, 'data must still be an object');
    assert.doesNotMatch(ok.body.errors[0], /depth/);
    const tooDeep = await call('POST', 'secret/data/deep', { raw: nested(500) });
    assert.equal(tooDeep.status, 400);
    assert.deepEqual(tooDeep.body, { errors: ['JSON input exceeds allowed nesting depth'] });
    const hostile = await call('POST', 'secret/data/deep', { raw: '['.repeat(1_000_000) });
    assert.equal(hostile.status, 400, 'a million open brackets is refused without building anything');
  });

  it('SEC-LIMIT-JSON-STRING-LENGTH: a string value longer than max_json_string_value_length (default 1 048 576) is refused with 400', async () => {
    const fits = await call('POST', 'secret/data/str', { body: { data: { s: 'a'.repeat(1_048_576) } } });
    assert.equal(fits.status, 200);
    const tooLong = await call('POST', 'secret/data/str', { body: { data: { s: 'a'.repeat(1_048_577) } } });
    assert.equal(tooLong.status, 400);
    assert.deepEqual(tooLong.body, { errors: ['JSON string value exceeds allowed length'] });
    assert.equal((await call('GET', 'secret/data/str')).body.data.metadata.version, 1);
  });

  it('SEC-LIMIT-JSON-OBJECT-ENTRIES: an object with more than max_json_object_entry_count (default 10 000) entries is refused with 400', async () => {
    const entries = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
    assert.equal((await call('POST', 'secret/data/obj', { body: { data: entries(10_000) } })).status, 200);
    const tooMany = await call('POST', 'secret/data/obj', { body: { data: entries(10_001) } });
    assert.equal(tooMany.status, 400);
    assert.deepEqual(tooMany.body, { errors: ['JSON object exceeds allowed entry count'] });
  });

  it('SEC-LIMIT-JSON-ARRAY-ELEMENTS: an array with more than max_json_array_element_count (default 10 000) elements is refused with 400', async () => {
    assert.equal((await call('POST', 'secret/data/arr', { body: { data: { a: Array(10_000).fill(0) } } })).status, 200);
    const tooMany = await call('POST', 'secret/data/arr', { body: { data: { a: Array(10_001).fill(0) } } });
    assert.equal(tooMany.status, 400);
    assert.deepEqual(tooMany.body, { errors: ['JSON array exceeds allowed element count'] });
  });

  it('SEC-LIMIT-JSON-DEPTH SEC-LIMIT-JSON-ARRAY-ELEMENTS: the four limits are listener options', async () => {
    const { server: tight, call: c } = await withServer({
      jsonLimits: { maxDepth: 3, maxArrayElementCount: 2, maxObjectEntryCount: 3, maxStringValueLength: 4 },
    });
    try {
      assert.equal((await c('POST', 'kv/t', { raw: '{"a":{"b":{"c":1}}}' })).status, 204);
      assert.equal((await c('POST', 'kv/t', { raw: '{"a":{"b":{"c":{}}}}' })).status, 400);
      assert.equal((await c('POST', 'kv/t', { raw: '{"a":[1,2,3]}' })).status, 400);
      assert.equal((await c('POST', 'kv/t', { raw: '{"a":1,"b":2,"c":3,"d":4}' })).status, 400);
      assert.equal((await c('POST', 'kv/t', { raw: '{"a":"12345"}' })).status, 400);
      assert.equal((await c('POST', 'kv/t', { raw: '{"a":1,"a":2}' })).status, 400, 'a repeated key is refused too');
    } finally {
      await tight.stop();
    }
  });

  it('SEC-AUTH-PROXY-REQUEST-HEADER: with require_request_header, only requests with X-Secrets-Request: true are served', async () => {
    const { server: proxy, call: c } = await withServer({ requireRequestHeader: true });
    try {
      const without = await c('GET', 'sys/seal-status');
      assert.equal(without.status, 412);
      assert.deepEqual(without.body, { errors: ['missing "X-Secrets-Request" header'] });
      assert.equal((await c('GET', 'sys/seal-status', { headers: { 'X-Secrets-Request': 'false' } })).status, 412);
      assert.equal((await c('POST', 'kv/x', { body: { a: 1 } })).status, 412);
      assert.equal((await c('GET', 'kv/x', { headers: { 'X-Secrets-Request': 'true' } })).status, 404, 'the refused write stored nothing');
      const withHeader = await c('POST', 'kv/x', { body: { a: 1 }, headers: { 'X-Secrets-Request': 'true' } });
      assert.equal(withHeader.status, 204);
    } finally {
      await proxy.stop();
    }
  });
});
