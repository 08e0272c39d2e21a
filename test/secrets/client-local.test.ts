import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { decideRetry } from '../../lib/http/index.js';
import { SecretsClient, SecretsConnectionError, SecretsError, SecretsLimitError, SecretsPathError, secretsRetryPolicy } from '../../lib/secrets/index.js';
import { envelope, startScriptedPeer, type ScriptedPeer } from './helpers/scripted-peer.js';

const token = 'canary-token-7f3a9b1c';
const fast = { retryWaitMinMs: 5, retryWaitMaxMs: 10 };

function client(peer: ScriptedPeer, options: ConstructorParameters<typeof SecretsClient>[0] = {}): SecretsClient {
  return new SecretsClient({ address: peer.url, token, ...fast, ...options, sources: { env: {}, pulumi: undefined } });
}

describe('secrets client against a scripted peer (statuses the kv server cannot be asked for)', () => {
  let peer: ScriptedPeer;
  beforeEach(async () => {
    peer = await startScriptedPeer();
  });
  afterEach(async () => {
    await peer.close();
  });

  describe('path rules: refused before sending', () => {
    const bad = ['app//db', 'app/../sys', 'app/db.', './x', 'a/\u0000b', '', 'app/'];
    for (const path of bad) {
      it(`SEC-PATH-TRAILING-PERIOD and segment rules: ${JSON.stringify(path)} is refused and nothing is sent`, async () => {
        const c = client(peer);
        const kv = c.kv('secret', { kvVersion: 2 });
        await assert.rejects(kv.read(path), SecretsPathError);
        await assert.rejects(kv.write(path, { a: 1 }), SecretsPathError);
        await assert.rejects(kv.delete(path), SecretsPathError);
        await assert.rejects(c.read(path), SecretsPathError);
        assert.equal(peer.requests.length, 0);
        c.close();
      });
    }

    it('each segment is URL-encoded: the peer sees the encoded path under /v1/ (SEC-API-PREFIX-V1)', async () => {
      peer.setScript(() => ({
        status: 200,
        body: envelope({ data: { k: 'v' }, metadata: { version: 1, created_time: 't', deletion_time: '', destroyed: false, custom_metadata: null } }),
      }));
      const c = client(peer);
      await c.kv('secret', { kvVersion: 2 }).read('team a/db?x#y/ü%');
      assert.equal(peer.requests[0]!.url, '/v1/secret/data/team%20a/db%3Fx%23y/%C3%BC%25');
      c.close();
    });

    it('a mount with a bad segment is refused too', () => {
      const c = client(peer);
      assert.throws(() => c.kv('sec./'), SecretsPathError);
      assert.throws(() => c.kv('a/../b'), SecretsPathError);
      c.close();
    });
  });

  describe('limits: refused before sending', () => {
    const cases: [string, () => Record<string, unknown>, SecretsLimitError['limit']][] = [
      [
        'SEC-LIMIT-REQUEST-SIZE: a 40 MB body (over 32 MB)',
        () => Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, 'x'.repeat(1_000_000)])),
        'max_request_size',
      ],
      [
        'SEC-LIMIT-JSON-DEPTH: depth 501',
        () => {
          let v: unknown = 1;
          for (let i = 0; i < 501; i++) v = { n: v };
          return v as Record<string, unknown>;
        },
        'max_json_depth',
      ],
      ['SEC-LIMIT-JSON-STRING-LENGTH: a 1 048 577-byte value', () => ({ v: 'x'.repeat(1_048_577) }), 'max_json_string_value_length'],
      [
        'SEC-LIMIT-JSON-OBJECT-ENTRIES: 10 001 keys',
        () => Object.fromEntries(Array.from({ length: 10_001 }, (_, i) => [`k${i}`, i])),
        'max_json_object_entry_count',
      ],
      ['SEC-LIMIT-JSON-ARRAY-ELEMENTS: 10 001 elements', () => ({ list: new Array(10_001).fill(1) }), 'max_json_array_element_count'],
    ];
    for (const [title, make, limit] of cases) {
      it(`${title} is a local, clear error and nothing is sent`, async () => {
        const c = client(peer);
        await assert.rejects(
          c.kv('secret', { kvVersion: 2 }).write('app', make()),
          (e: unknown) => e instanceof SecretsLimitError && e.limit === limit && /nothing was sent/.test(e.message),
        );
        await assert.rejects(c.kv('kv', { kvVersion: 1 }).write('app', make()), (e: unknown) => e instanceof SecretsLimitError && e.limit === limit);
        assert.equal(peer.requests.length, 0);
        c.close();
      });
    }

    it('SEC-LIMIT-JSON-DEPTH: the kv v2 "data" wrapper counts as a level', async () => {
      peer.setScript(() => ({ status: 204 }));
      const c = client(peer);
      let v: unknown = 1;
      for (let i = 0; i < 500; i++) v = { n: v };
      await c.kv('kv', { kvVersion: 1 }).write('app', v as Record<string, unknown>);
      assert.equal(peer.requests.length, 1);
      await assert.rejects(
        c.kv('secret', { kvVersion: 2 }).write('app', v as Record<string, unknown>),
        (e: unknown) => e instanceof SecretsLimitError && e.limit === 'max_json_depth',
      );
      assert.equal(peer.requests.length, 1);
      c.close();
    });

    it('SEC-LIMIT-REQUEST-SIZE: the size limit is configurable, and a body just under it is sent', async () => {
      peer.setScript(() => ({ status: 204 }));
      const c = client(peer, { limits: { maxRequestBytes: 2000 } });
      await assert.rejects(c.kv('kv', { kvVersion: 1 }).write('app', { v: 'x'.repeat(2000) }), SecretsLimitError);
      assert.equal(peer.requests.length, 0);
      await c.kv('kv', { kvVersion: 1 }).write('app', { v: 'x'.repeat(1900) });
      assert.equal(peer.requests.length, 1);
      c.close();
    });
  });

  describe('headers', () => {
    it('SEC-HEADERS-SET, SEC-AUTH-CLIENTS-SEND-REQUEST-HEADER, SEC-AUTH-TOKEN-HEADER, SEC-NS-RELATIVE: X-Secrets-Request: true, the token and the namespace on every request', async () => {
      peer.setScript(() => ({ status: 200, body: envelope({ k: 'v' }) }));
      const c = client(peer, { namespace: '/team//a' });
      await c.kv('kv', { kvVersion: 1, namespace: 'child' }).read('app');
      const headers = peer.requests[0]!.headers;
      assert.equal(headers['x-secrets-request'], 'true');
      assert.equal(headers['x-secrets-token'], token);
      assert.equal(headers.authorization, undefined);
      assert.equal(headers['x-secrets-namespace'], 'team/a/child/');
      c.close();
    });

    it('SEC-AUTH-BEARER: the token can go in Authorization: Bearer instead', async () => {
      peer.setScript(() => ({ status: 200, body: envelope({ k: 'v' }) }));
      const c = client(peer, { tokenHeader: 'authorization' });
      await c.kv('kv', { kvVersion: 1 }).read('app');
      assert.equal(peer.requests[0]!.headers.authorization, `Bearer ${token}`);
      assert.equal(peer.requests[0]!.headers['x-secrets-token'], undefined);
      c.close();
    });

    it('SEC-CONTENT-TYPE-SERVER, SEC-API-JSON: reads send no Content-Type; writes send a JSON body', async () => {
      peer.setScript(() => ({ status: 204 }));
      const c = client(peer);
      await c.kv('kv', { kvVersion: 1 }).write('app', { a: 1 });
      await c.read('kv/app');
      assert.equal(peer.requests[0]!.headers['content-type'], 'application/json');
      assert.deepEqual(JSON.parse(peer.requests[0]!.body), { a: 1 });
      assert.equal(peer.requests[1]!.headers['content-type'], undefined);
      c.close();
    });
  });

  describe('responses', () => {
    it('SEC-STATUS-204: 204 and 200-with-warnings are both a no-body success', async () => {
      const c = client(peer);
      peer.setScript(() => ({ status: 204 }));
      const a = await c.kv('kv', { kvVersion: 1 }).write('app', { a: 1 });
      assert.deepEqual(a.warnings, []);
      peer.setScript(() => ({ status: 200, body: envelope(null, { warnings: ['check-and-set is ignored on kv v1'] }) }));
      const b = await c.kv('kv', { kvVersion: 1 }).write('app', { a: 1 });
      assert.deepEqual(b.warnings, ['check-and-set is ignored on kv v1']);
      c.close();
    });

    it('SEC-ERR-BODY, SEC-STATUS-400: errors are typed with status, errors, warnings, method and path, without the token', async () => {
      peer.setScript(() => ({ status: 400, body: { errors: ['check-and-set parameter did not match the current version'], warnings: ['w1'] } }));
      const c = client(peer);
      const error = await c
        .kv('secret', { kvVersion: 2 })
        .write('app/db', { a: 1 }, { cas: 3 })
        .catch((e: unknown) => e);
      assert.ok(error instanceof SecretsError);
      assert.equal(error.status, 400);
      assert.deepEqual(error.errors, ['check-and-set parameter did not match the current version']);
      assert.deepEqual(error.warnings, ['w1']);
      assert.equal(error.method, 'POST');
      assert.equal(error.path, 'secret/data/app/db');
      assert.equal(error.exitCode, 1);
      assert.match(error.message, /400 to POST \/v1\/secret\/data\/app\/db: check-and-set parameter did not match/);
      assert.ok(!JSON.stringify({ m: error.message, s: error.stack, h: error.hint }).includes(token));
      c.close();
    });

    it('SEC-LIST-EMPTY-404: an empty list (404 {errors: []}) is []; the LIST method falls back to GET ?list=true where it is unknown', async () => {
      peer.setScript(() => ({ status: 404, body: { errors: [] } }));
      const c = client(peer);
      assert.deepEqual(await c.kv('kv', { kvVersion: 1 }).list('nothing/'), []);
      // Node's parser does not know LIST: the client fell back to GET with list=true (SEC-EP-LIST).
      assert.equal(peer.requests.at(-1)!.method, 'GET');
      assert.equal(peer.requests.at(-1)!.url, '/v1/kv/nothing/?list=true');
      peer.setScript(() => ({ status: 200, body: envelope({ keys: ['a', 'b/'] }) }));
      assert.deepEqual(await c.kv('secret', { kvVersion: 2 }).list(), ['a', 'b/']);
      assert.equal(peer.requests.at(-1)!.url, '/v1/secret/metadata/?list=true');
      c.close();
    });

    it('SEC-STATUS-404: a 404 with errors is an error (no such route), a 404 with none is a missing secret', async () => {
      const c = client(peer);
      peer.setScript(() => ({ status: 404, body: { errors: [] } }));
      assert.equal((await c.kv('kv', { kvVersion: 1 }).read('gone')).state, 'missing');
      peer.setScript(() => ({ status: 404, body: { errors: ["no handler for route 'nomount/gone'. route entry not found."] } }));
      await assert.rejects(
        c.kv('nomount', { kvVersion: 1 }).read('gone'),
        (e: unknown) => e instanceof SecretsError && e.status === 404 && /no handler for route/.test(e.message),
      );
      c.close();
    });
  });

  describe('robustness', () => {
    it("SEC-API-JSON: a non-JSON answer (a proxy's HTML page) is a clear error, not a crash", async () => {
      const c = client(peer);
      peer.setScript(() => ({ status: 200, headers: { 'content-type': 'text/html' }, raw: '<html>proxy login</html>' }));
      await assert.rejects(c.kv('kv', { kvVersion: 1 }).read('app'), /not JSON/);
      // An error status with an HTML body keeps the status and shows the start of the body.
      peer.setScript(() => ({ status: 403, headers: { 'content-type': 'text/html' }, raw: '<html>forbidden by proxy</html>' }));
      await assert.rejects(c.kv('kv', { kvVersion: 1 }).read('app'), (e: unknown) => e instanceof SecretsError && e.status === 403);
      c.close();
    });

    it('SEC-VER-NO-COMPAT-PROMISE: unknown fields are ignored and absent optional fields do not break a read', async () => {
      peer.setScript(() => ({ status: 200, body: { data: { data: { k: 'v' }, metadata: { version: 4, future_field: true } }, brand_new: 1 } }));
      const c = client(peer);
      const read = await c.kv('secret', { kvVersion: 2 }).read('app');
      assert.equal(read.state, 'current');
      assert.deepEqual(read.data, { k: 'v' });
      assert.equal(read.metadata?.version, 4);
      assert.equal(read.metadata?.deletionTime, '');
      c.close();
    });

    it('SEC-PARAMS-QUERY-VS-BODY: secrets travel in bodies, never in the URL; only version, list and help go in the query', async () => {
      peer.setScript((r) => ({
        status: 200,
        body: r.url.includes('login')
          ? envelope(null, { auth: { client_token: 'issued-token-1234', policies: ['p'], lease_duration: 60, renewable: true } })
          : envelope({ data: { a: 1 }, metadata: { version: 2 } }),
      }));
      const c = client(peer, { token: undefined });
      await c.loginUserpass('alice', 'pw-in-body-only');
      await c.loginAppRole('role-1', 'secret-id-in-body');
      await c.kv('secret', { kvVersion: 2 }).read('app', { version: 2 });
      for (const r of peer.requests) {
        assert.ok(!r.url.includes('pw-in-body-only') && !r.url.includes('secret-id-in-body'), r.url);
      }
      assert.deepEqual(JSON.parse(peer.requests[0]!.body), { password: 'pw-in-body-only' });
      assert.equal(peer.requests[0]!.url, '/v1/auth/userpass/login/alice');
      assert.equal(peer.requests[0]!.headers['x-secrets-token'], undefined, 'SEC-AUTH-LOGIN-NO-AUTH: login sends no token');
      assert.deepEqual(JSON.parse(peer.requests[1]!.body), { role_id: 'role-1', secret_id: 'secret-id-in-body' });
      assert.equal(peer.requests[2]!.url, '/v1/secret/data/app?version=2');
      assert.equal(peer.requests[2]!.headers['x-secrets-token'], 'issued-token-1234', 'the login token is used afterwards');
      c.close();
    });
  });

  describe('retries (Vault client defaults)', () => {
    it('SEC-STATUS-412, SEC-STATUS-429, SEC-STATUS-500, SEC-STATUS-502, SEC-STATUS-503: retried twice, then a typed error', async () => {
      for (const status of [412, 429, 500, 502, 503, 504]) {
        peer.requests.length = 0;
        peer.setScript(() => ({ status, body: { errors: [`status ${status}`] } }));
        const c = client(peer);
        const error = await c
          .kv('secret', { kvVersion: 2 })
          .write('app', { a: 1 })
          .catch((e: unknown) => e);
        assert.ok(error instanceof SecretsError, `status ${status}`);
        assert.equal(error.status, status);
        assert.equal(error.attempts, 3);
        assert.equal(peer.requests.length, 3, `status ${status} was tried 3 times`);
        c.close();
      }
    });

    it('SEC-STATUS-400, SEC-STATUS-403, SEC-STATUS-405, SEC-STATUS-501: never retried (nor 401, 404, 413, 415)', async () => {
      for (const status of [400, 401, 403, 404, 405, 413, 415, 501]) {
        peer.requests.length = 0;
        peer.setScript(() => ({ status, body: { errors: [`status ${status}`] } }));
        const c = client(peer);
        await assert.rejects(
          c.kv('secret', { kvVersion: 2 }).write('app', { a: 1 }),
          (e: unknown) => e instanceof SecretsError && e.status === status && e.attempts === 1,
        );
        if (status === 404) assert.equal(await c.read('secret/data/app'), undefined);
        else await assert.rejects(c.read('secret/data/app'), (e: unknown) => e instanceof SecretsError && e.status === status);
        assert.equal(peer.requests.length, 2, `status ${status} was tried once per call`);
        c.close();
      }
    });

    it('SEC-STATUS-472, SEC-STATUS-473: replication and standby health statuses are typed errors, not retried', async () => {
      for (const status of [472, 473]) {
        peer.requests.length = 0;
        peer.setScript(() => ({ status, body: { errors: [] } }));
        const c = client(peer);
        await assert.rejects(
          c.kv('kv', { kvVersion: 1 }).read('app'),
          (e: unknown) => e instanceof SecretsError && e.status === status && e.attempts === 1 && /standby|secondary/.test(e.hint ?? ''),
        );
        assert.equal(peer.requests.length, 1);
        c.close();
      }
    });

    it('SEC-STATUS-412: 412 then success succeeds on the retry', async () => {
      peer.setScript((_r, i) => (i === 0 ? { status: 412, body: { errors: ['not yet consistent'] } } : { status: 200, body: envelope({ k: 'v' }) }));
      const c = client(peer);
      const result = await c.kv('kv', { kvVersion: 1 }).read('app');
      assert.equal(result.state, 'current');
      assert.deepEqual(result.data, { k: 'v' });
      assert.equal(peer.requests.length, 2);
      c.close();
    });

    it('SEC-STATUS-429: Retry-After is honoured', async () => {
      peer.setScript((_r, i) =>
        i === 0 ? { status: 429, headers: { 'retry-after': '1' }, body: { errors: [] } } : { status: 200, body: envelope({ k: 'v' }) },
      );
      const c = client(peer);
      await c.kv('kv', { kvVersion: 1 }).read('app');
      const waited = peer.requests[1]!.at - peer.requests[0]!.at;
      assert.ok(waited >= 950, `waited ${waited} ms for Retry-After: 1`);
      c.close();
    });

    it("defaults are Vault's: 2 retries, the first wait jittered in 1-1.5 s, the second in 2-3 s", () => {
      const policy = secretsRetryPolicy({ maxRetries: 2, retryWaitMinMs: 1000, retryWaitMaxMs: 1500, timeoutMs: 60_000 }, 'POST');
      const wait = (retryIndex: number, r: number) => {
        const d = decideRetry({ policy, retryIndex, method: 'POST', status: 503, waitedMs: 0, random: () => r });
        return d.retry ? d.delayMs : -1;
      };
      assert.deepEqual([wait(0, 1), wait(0, 0), wait(1, 1), wait(1, 0), wait(2, 0)], [1000, 1500, 2000, 3000, -1]);
      assert.equal(policy.retries, 2);
    });

    it('connection refused: retried (nothing was sent), then a clear connection error', async () => {
      const port = await new Promise<number>((resolve) => {
        const s = createServer();
        s.listen(0, '127.0.0.1', () => {
          const p = (s.address() as AddressInfo).port;
          s.close(() => resolve(p));
        });
      });
      const c = new SecretsClient({ address: `http://127.0.0.1:${port}`, token, ...fast, sources: { env: {}, pulumi: undefined } });
      const error = await c
        .kv('secret', { kvVersion: 2 })
        .write('app', { a: 1 })
        .catch((e: unknown) => e);
      assert.ok(error instanceof SecretsConnectionError);
      assert.equal(error.errno, 'ECONNREFUSED');
      assert.equal(error.attempts, 3);
      assert.equal(error.maybeApplied, false);
      assert.match(error.message, /POST \/v1\/secret\/data\/app/);
      c.close();
    });

    it('a write whose connection breaks after sending is not retried and says it may have been applied', async () => {
      peer.setScript(() => ({ status: 0, reset: true }));
      const c = client(peer);
      const error = await c
        .kv('secret', { kvVersion: 2 })
        .write('app', { a: 1 })
        .catch((e: unknown) => e);
      assert.ok(error instanceof SecretsConnectionError, String(error));
      assert.equal(error.maybeApplied, true);
      assert.match(error.message, /may or may not have been applied/);
      assert.equal(peer.requests.length, 1);
      // A read is idempotent: retried.
      peer.requests.length = 0;
      await assert.rejects(c.read('secret/data/app'), SecretsConnectionError);
      assert.equal(peer.requests.length, 3);
      c.close();
    });
  });

  it('the client never shows its token: not in JSON, inspect, or errors', async () => {
    const util = await import('node:util');
    const c = client(peer);
    assert.ok(!JSON.stringify(c).includes(token));
    assert.ok(!util.inspect(c, { depth: 10, showHidden: true }).includes(token));
    c.close();
  });
});
