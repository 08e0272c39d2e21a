import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import http from 'node:http';
import { inspect } from 'node:util';
import {
  createHttpClient,
  createProxyAgents,
  definePolicy,
  HttpError,
  NetworkError,
  noProxyMatcher,
  proxySettingsFromEnv,
  redact,
} from '../../lib/http/index.js';
import { createLogger } from '../../lib/log.js';
import { fetchS3 } from '../../lib/sources/s3.js';
import type { S3Location } from '../../lib/sources/location.js';
import { sendJson, startHttpPeer, type HttpPeer } from '../peers/http.js';
import { startProxyPeer, type ProxyPeer } from '../peers/proxy.js';
import { startS3Peer, type S3Peer } from '../peers/s3.js';
import { makeTestPki, type TestPki } from '../peers/tls.js';

const once = definePolicy({ retries: 0 });

/** A PUT that waits for `100 Continue` before its body: its head is rendered before the agent sees it. */
function putExpectingContinue(agent: http.Agent, url: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'PUT', agent, headers: { expect: '100-continue', 'content-type': 'text/plain' } });
    request.on('continue', () => request.end(body));
    request.on('response', (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', reject);
  });
}

describe('outgoing proxies (lib/http/proxy)', () => {
  describe('NO_PROXY, as curl reads it', () => {
    it('a name matches itself and the names under it, with or without a leading dot, never a longer name', () => {
      const bypass = noProxyMatcher('example.com, .corp.example, *.internal');
      assert.equal(bypass('example.com', 443), true);
      assert.equal(bypass('API.Example.com', 443), true);
      assert.equal(bypass('badexample.com', 443), false);
      assert.equal(bypass('corp.example', 80), true);
      assert.equal(bypass('git.corp.example', 80), true);
      assert.equal(bypass('svc.internal', 80), true);
      assert.equal(bypass('example.org', 443), false);
    });

    it('`*` sends every host direct; an empty list none', () => {
      assert.equal(noProxyMatcher('*')('anything.example', 443), true);
      assert.equal(noProxyMatcher('')('anything.example', 443), false);
      assert.equal(noProxyMatcher(undefined)('anything.example', 443), false);
    });

    it('host:port matches that port only', () => {
      const bypass = noProxyMatcher('registry.example:8443,[::1]:8080');
      assert.equal(bypass('registry.example', 8443), true);
      assert.equal(bypass('registry.example', 443), false);
      assert.equal(bypass('[::1]', 8080), true);
      assert.equal(bypass('::1', 80), false);
    });

    it('addresses and ranges match addresses; loopback is not bypassed unless listed', () => {
      const bypass = noProxyMatcher('10.0.0.0/8, 192.168.1.7, fd00::/8');
      assert.equal(bypass('10.20.30.40', 80), true);
      assert.equal(bypass('192.168.1.7', 80), true);
      assert.equal(bypass('192.168.1.8', 80), false);
      assert.equal(bypass('[fd12::1]', 443), true);
      assert.equal(bypass('127.0.0.1', 80), false);
      assert.equal(bypass('localhost', 80), false);
      assert.equal(noProxyMatcher('localhost,127.0.0.1')('127.0.0.1', 80), true);
    });

    it('reads the lower-case variables first, and an empty value as unset', () => {
      assert.deepEqual(
        proxySettingsFromEnv({ https_proxy: 'http://low:1', HTTPS_PROXY: 'http://up:2', HTTP_PROXY: 'http://up:3', no_proxy: '', NO_PROXY: 'a.example' }),
        { httpsProxy: 'http://low:1', httpProxy: 'http://up:3', noProxy: 'a.example' },
      );
      assert.deepEqual(proxySettingsFromEnv({}), { httpsProxy: undefined, httpProxy: undefined, noProxy: undefined });
    });
  });

  describe('through a real proxy', () => {
    let proxy: ProxyPeer;
    let target: HttpPeer;
    before(async () => {
      proxy = await startProxyPeer();
      target = await startHttpPeer((request, response) => sendJson(response, 200, { path: request.url, via: request.headers.via ?? null }));
    });
    after(async () => {
      await target.close();
      await proxy.close();
    });
    beforeEach(() => {
      proxy.reset();
      target.requests.length = 0;
    });

    it('sends an http request through HTTP_PROXY from the environment', async () => {
      const saved = { HTTP_PROXY: process.env.HTTP_PROXY, http_proxy: process.env.http_proxy, NO_PROXY: process.env.NO_PROXY, no_proxy: process.env.no_proxy };
      Object.assign(process.env, { HTTP_PROXY: proxy.url, http_proxy: '', NO_PROXY: '', no_proxy: '' });
      try {
        const client = createHttpClient({ baseUrl: target.url, retry: once });
        const response = await client.request<{ path: string; via: string | null }>({ url: '/through?x=1' });
        assert.equal(response.body.path, '/through?x=1');
        assert.match(String(response.body.via), /proxy\//, 'the proxy forwarded it');
        assert.deepEqual(proxy.requests, [`GET http://127.0.0.1:${target.port}/through?x=1`], 'the request in absolute form, as curl sends it');
        assert.deepEqual(proxy.connects, []);
        assert.equal(target.requests[0]?.headers.host, `127.0.0.1:${target.port}`, "the Host header is the target's");
        client.close();
      } finally {
        for (const [name, value] of Object.entries(saved)) {
          if (value === undefined) delete process.env[name];
          else process.env[name] = value;
        }
      }
    });

    it('keeps one connection to the proxy for several requests, to every proxied target (keep-alive)', async () => {
      const other = await startHttpPeer((request, response) => sendJson(response, 200, { path: request.url }));
      try {
        const client = createHttpClient({ baseUrl: target.url, retry: once, proxy: { httpProxy: proxy.url } });
        for (let i = 0; i < 3; i += 1) await client.request({ url: `/n${i}` });
        await client.request({ url: `${other.url}/elsewhere` });
        assert.equal(target.requests.length, 3);
        assert.equal(other.requests.length, 1);
        assert.deepEqual(
          proxy.requests,
          [0, 1, 2].map((i) => `GET http://127.0.0.1:${target.port}/n${i}`).concat(`GET http://127.0.0.1:${other.port}/elsewhere`),
        );
        assert.deepEqual(proxy.connects, []);
        assert.equal(proxy.connections, 1);
        client.close();
      } finally {
        await other.close();
      }
    });

    it('names the target in absolute form: IPv6 in brackets, the default port left out', async () => {
      const client = createHttpClient({ retry: once, proxy: { httpProxy: proxy.url } });
      // The proxy cannot reach either (nothing listens there): what counts is the request line it got.
      await client.request({ url: 'http://[::1]:9/v6?q=1', accept: () => true }).catch(() => undefined);
      await client.request({ url: 'http://localhost/default-port', accept: () => true }).catch(() => undefined);
      assert.deepEqual(proxy.requests, ['GET http://[::1]:9/v6?q=1', 'GET http://localhost/default-port']);
      client.close();
    });

    it('rewrites a request whose head is rendered early (Expect: 100-continue, as the S3 SDK sends bodies)', async () => {
      const agents = createProxyAgents({ httpProxy: proxy.url });
      try {
        assert.equal(await putExpectingContinue(agents.http, `${target.url}/upload`, 'payload'), 200);
        assert.deepEqual(proxy.requests, [`PUT http://127.0.0.1:${target.port}/upload`]);
        assert.equal(target.requests[0]?.body, 'payload');
      } finally {
        agents.destroy();
      }
    });

    it('a 407 from a server reached direct is an HttpError like any other status', async () => {
      const strict = await startHttpPeer((_request, response) => {
        response.writeHead(407, { 'proxy-authenticate': 'Basic realm="origin"' });
        response.end();
      });
      try {
        const client = createHttpClient({ baseUrl: strict.url, retry: once, proxy: { httpProxy: proxy.url, noProxy: `127.0.0.1:${strict.port}` } });
        await assert.rejects(client.request({ url: '/x' }), (error: unknown) => error instanceof HttpError && error.status === 407);
        assert.deepEqual(proxy.requests, []);
        client.close();
      } finally {
        await strict.close();
      }
    });

    it('NO_PROXY sends a listed host direct', async () => {
      const client = createHttpClient({
        baseUrl: target.url,
        retry: once,
        proxy: { httpProxy: proxy.url, httpsProxy: proxy.url, noProxy: `example.com, 127.0.0.1:${target.port}` },
      });
      assert.equal((await client.request({ url: '/direct' })).status, 200);
      assert.deepEqual(proxy.connects, []);
      assert.deepEqual(proxy.requests, []);
      client.close();
    });

    it('an unreachable proxy is a NetworkError that names the proxy, never its password', async () => {
      const client = createHttpClient({ baseUrl: target.url, retry: once, proxy: { httpProxy: 'http://deploy:unreachable-proxy-pw@127.0.0.1:1' } });
      const error = await client.request({ url: '/x' }).catch((caught: unknown) => caught);
      assert.ok(error instanceof NetworkError, String(error));
      assert.equal(error.errorCode, 'ECONNREFUSED');
      assert.match(error.message, /through the proxy http:\/\/127\.0\.0\.1:1\b/);
      assert.match(error.hint ?? '', /proxy http:\/\/127\.0\.0\.1:1 .*NO_PROXY/);
      const everything = `${error.message} ${error.hint} ${inspect(error, { depth: 8 })} ${JSON.stringify(error)}`;
      assert.ok(!everything.includes('unreachable-proxy-pw'), everything);
      assert.equal(target.requests.length, 0);
      client.close();
    });

    describe('https', () => {
      let pki: TestPki;
      let secure: HttpPeer;
      before(async () => {
        pki = makeTestPki();
        secure = await startHttpPeer((request, response) => sendJson(response, 200, { path: request.url }), { tls: { cert: pki.cert, key: pki.key } });
      });
      after(async () => {
        await secure.close();
        pki.remove();
      });

      it('tunnels an https request with CONNECT; the proxy sees the host and port, never the request', async () => {
        const client = createHttpClient({ baseUrl: secure.url, retry: once, tls: { caFile: pki.caFile }, proxy: { httpsProxy: proxy.url } });
        const response = await client.request<{ path: string }>({ url: '/secret/path?token=abc', headers: { authorization: 'Bearer tunnelled-token-1' } });
        assert.equal(response.body.path, '/secret/path?token=abc');
        assert.deepEqual(proxy.connects, [`127.0.0.1:${secure.port}`]);
        assert.deepEqual(proxy.requests, []);
        client.close();
      });

      it('checks the server certificate through the tunnel as it would direct', async () => {
        const client = createHttpClient({ baseUrl: secure.url, retry: once, proxy: { httpsProxy: proxy.url } });
        await assert.rejects(
          client.request({ url: '/x' }),
          (error: NetworkError) => error instanceof NetworkError && error.diagnosis === 'untrusted-certificate',
        );
        client.close();
      });
    });
  });

  describe('a proxy that wants credentials', () => {
    const credentials = { user: 'deploy', password: 'proxy-pass-w0rd' };
    let proxy: ProxyPeer;
    let target: HttpPeer;
    before(async () => {
      proxy = await startProxyPeer({ credentials });
      target = await startHttpPeer((_request, response) => sendJson(response, 200, { ok: true }));
    });
    after(async () => {
      await target.close();
      await proxy.close();
    });

    it('sends the credentials of the proxy URL to the proxy, and a wrong password never shows in the error', async () => {
      proxy.reset();
      const client = createHttpClient({ baseUrl: target.url, retry: once, proxy: { httpProxy: proxy.urlWithCredentials() } });
      assert.equal((await client.request({ url: '/x' })).status, 200);
      assert.equal((await client.request({ url: '/y' })).status, 200);
      assert.equal(proxy.refused, 0);
      assert.deepEqual(proxy.requests, [`GET http://127.0.0.1:${target.port}/x`, `GET http://127.0.0.1:${target.port}/y`]);
      client.close();
      const agents = createProxyAgents({ httpProxy: proxy.urlWithCredentials() });
      assert.equal(await putExpectingContinue(agents.http, `${target.url}/upload`, 'payload'), 200, 'a head rendered early gets the credentials too');
      assert.equal(proxy.refused, 0);
      agents.destroy();

      const lines: string[] = [];
      const wrong = createHttpClient({
        baseUrl: target.url,
        retry: definePolicy({ retries: 3 }),
        proxy: { httpProxy: proxy.urlWithCredentials('deploy', 'wrong-proxy-pass-77') },
        logger: createLogger({ level: 'debug', write: (line) => lines.push(line) }),
      });
      const error = await wrong.request({ url: '/x' }).catch((caught: unknown) => caught);
      assert.ok(error instanceof NetworkError, String(error));
      assert.equal(error.errorCode, 'ERR_PROXY_AUTH');
      assert.match(error.message, /through the proxy http:\/\/127\.0\.0\.1:\d+: ERR_PROXY_AUTH \(the proxy answered 407/);
      assert.match(error.hint ?? '', /proxy http:\/\/127\.0\.0\.1:\d+ wants credentials/);
      assert.equal(error.attempts, 1, 'a refusal is not retried');
      assert.equal(proxy.refused, 1);
      const everything = `${error.message} ${error.hint} ${inspect(error, { depth: 8 })} ${JSON.stringify(error)} ${lines.join('\n')}`;
      for (const secret of ['wrong-proxy-pass-77', credentials.password, Buffer.from(`deploy:${credentials.password}`).toString('base64')]) {
        assert.ok(!everything.includes(secret), `${secret} in ${everything}`);
      }
      assert.equal(redact(`proxy said no to ${credentials.password}`), 'proxy said no to [REDACTED]', 'the proxy password is a registered secret');
      wrong.close();
    });

    it('a 407 to a CONNECT is the same error', async () => {
      proxy.reset();
      const client = createHttpClient({
        retry: definePolicy({ retries: 3 }),
        proxy: { httpsProxy: proxy.urlWithCredentials('deploy', 'wrong-tunnel-pass-88') },
      });
      const error = await client.request({ url: `https://127.0.0.1:${target.port}/x` }).catch((caught: unknown) => caught);
      assert.ok(error instanceof NetworkError, String(error));
      assert.equal(error.errorCode, 'ERR_PROXY_AUTH');
      assert.match(error.message, /407/);
      assert.equal(error.attempts, 1);
      assert.deepEqual(proxy.connects, [`127.0.0.1:${target.port}`]);
      const everything = `${error.message} ${error.hint} ${inspect(error, { depth: 8 })} ${JSON.stringify(error)}`;
      assert.ok(!everything.includes('wrong-tunnel-pass-88'), everything);
      client.close();
    });
  });

  describe('S3', () => {
    let proxy: ProxyPeer;
    let s3: S3Peer;
    let dir: string;
    before(async function () {
      this.timeout(60_000);
      proxy = await startProxyPeer();
      s3 = await startS3Peer();
      await s3.createBucket('proxied');
      await s3.putObject('proxied', 'module.tgz', 'bytes through the proxy');
      dir = await mkdtemp(join(tmpdir(), 'gantry-proxy-s3-'));
    });
    after(async () => {
      await s3?.stop();
      await proxy?.close();
      await rm(dir, { recursive: true, force: true });
    });

    it('an S3 GET goes through HTTP_PROXY, and NO_PROXY sends it direct', async () => {
      const location: S3Location = {
        getter: 's3',
        bucket: 'proxied',
        key: 'module.tgz',
        region: s3.region,
        endpoint: s3.endpoint,
        versionId: undefined,
        archive: undefined,
        checksum: undefined,
        subdir: '',
      };
      const host = new URL(s3.endpoint).host;
      const fetchVia = (env: NodeJS.ProcessEnv, file: string) =>
        fetchS3(location, join(dir, file), { env, maxBytes: 1024, checksumsWhenRequired: true, clientConfig: { credentials: s3.credentials } });
      assert.equal(await fetchVia({ HTTP_PROXY: proxy.url }, 'a'), 23);
      assert.equal(await readFile(join(dir, 'a'), 'utf8'), 'bytes through the proxy');
      assert.ok(proxy.requests.length === 1 && proxy.requests[0]!.startsWith(`GET http://${host}/proxied/module.tgz`), proxy.requests.join('\n'));
      assert.deepEqual(proxy.connects, []);
      proxy.reset();
      await fetchVia({ HTTP_PROXY: proxy.url, NO_PROXY: '127.0.0.1' }, 'b');
      assert.deepEqual(proxy.requests, []);
      assert.deepEqual(proxy.connects, []);
    });
  });
});
