// The settings that came from code only before — token header, namespace placement, request limits — set from the
// environment, Pulumi config and the command's flags, against the embedded kv server over real sockets.
import assert from 'node:assert/strict';
import { runNode, type Ran } from './helpers/run-process.js';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { startSecretsServer, type SecretsServer } from '../../devserver/secrets/index.js';
import { SecretsClient, SecretsLimitError } from '../../lib/secrets/index.js';
import { gantryBin } from '../analysis/gantry.js';

/** What reached the wire: a forwarding peer in front of the real server records each request's line and headers. */
interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

async function startRecordingForwarder(target: string): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: { ...req.headers } });
    const upstream = http.request(`${target}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: 1 };
  for (let i = 1; i < depth; i++) value = { k: value };
  return value;
}

describe('secrets settings from the environment, Pulumi config and flags, against the embedded kv server', function () {
  this.timeout(60_000);
  let server: SecretsServer;
  let requests: string[];

  before(async () => {
    server = await startSecretsServer({ log: (line) => requests.push(line), namespaces: ['team'] });
  });
  beforeEach(() => {
    requests = [];
  });
  after(async () => {
    await server.stop();
  });

  const clientFrom = (env: Record<string, string>) =>
    new SecretsClient({ sources: { env: { SECRETS_ADDR: server.url, SECRETS_TOKEN: server.rootToken, ...env }, pulumi: undefined } });

  it('SEC-LIMIT-JSON-DEPTH: a depth lowered in SECRETS_MAX_JSON_DEPTH is refused locally before sending; a shallower write goes through', async () => {
    const client = clientFrom({ SECRETS_MAX_JSON_DEPTH: '4' });
    try {
      const kv = client.kv('secret', { kvVersion: 2 });
      // kv v2 wraps the data in {data: …}: the wrapper is depth 1, so 3 levels of data fit in 4 and 4 do not
      const error = await kv.write('env-limit', nested(4)).catch((e: unknown) => e);
      assert.ok(error instanceof SecretsLimitError, String(error));
      assert.equal(error.limit, 'max_json_depth');
      assert.equal(error.maximum, 4);
      assert.equal(error.exitCode, 2);
      assert.match(error.message, /nothing was sent/);
      assert.deepEqual(requests, [], 'the server saw no request');
      await kv.write('env-limit', nested(3));
      assert.deepEqual(requests, ['POST /v1/secret/data/env-limit 200']);
      assert.deepEqual((await kv.read('env-limit')).data, nested(3));
    } finally {
      client.close();
    }
  });

  it('SEC-LIMIT-REQUEST-SIZE, SEC-LIMIT-JSON-ARRAY-ELEMENTS: limits from Pulumi config (PULUMI_CONFIG), the environment winning over it', async () => {
    const pulumiConfig = JSON.stringify({ 'gantry:secretsMaxRequestSize': '200', 'gantry:secretsMaxJsonArrayElementCount': '2' });
    const client = new SecretsClient({ sources: { env: { SECRETS_ADDR: server.url, SECRETS_TOKEN: server.rootToken, PULUMI_CONFIG: pulumiConfig } } });
    const envWins = new SecretsClient({
      sources: { env: { SECRETS_ADDR: server.url, SECRETS_TOKEN: server.rootToken, PULUMI_CONFIG: pulumiConfig, SECRETS_MAX_JSON_ARRAY_ELEMENT_COUNT: '5' } },
    });
    try {
      const kv = client.kv('kv', { kvVersion: 1 });
      await assert.rejects(
        kv.write('big', { v: 'x'.repeat(300) }),
        (e: unknown) => e instanceof SecretsLimitError && e.limit === 'max_request_size' && e.maximum === 200,
      );
      await assert.rejects(
        kv.write('list', { v: [1, 2, 3] }),
        (e: unknown) => e instanceof SecretsLimitError && e.limit === 'max_json_array_element_count' && e.maximum === 2,
      );
      assert.deepEqual(requests, []);
      await envWins.kv('kv', { kvVersion: 1 }).write('list', { v: [1, 2, 3] });
      assert.deepEqual(requests, ['POST /v1/kv/list 204']);
    } finally {
      client.close();
      envWins.close();
    }
  });

  it('SEC-AUTH-BEARER, SEC-AUTH-TOKEN-HEADER: SECRETS_TOKEN_HEADER=authorization sends Authorization: Bearer only; the default sends X-Secrets-Token only', async () => {
    const forwarder = await startRecordingForwarder(server.url);
    const bearer = clientFrom({ SECRETS_ADDR: forwarder.url, SECRETS_TOKEN_HEADER: 'authorization' });
    const plain = clientFrom({ SECRETS_ADDR: forwarder.url });
    try {
      await bearer.kv('secret', { kvVersion: 2 }).write('bearer', { v: 1 });
      assert.deepEqual((await plain.kv('secret', { kvVersion: 2 }).read('bearer')).data, { v: 1 });
      const [write, read] = forwarder.seen;
      assert.equal(write!.headers.authorization, `Bearer ${server.rootToken}`);
      assert.equal(write!.headers['x-secrets-token'], undefined);
      assert.equal(read!.headers['x-secrets-token'], server.rootToken);
      assert.equal(read!.headers.authorization, undefined);
    } finally {
      bearer.close();
      plain.close();
      await forwarder.close();
    }
  });

  it('SEC-NS-EQUIVALENCE: SECRETS_NAMESPACE_IN=path puts the namespace in front of the path, and reaches the same secret as the header', async () => {
    const forwarder = await startRecordingForwarder(server.url);
    const inPath = clientFrom({ SECRETS_ADDR: forwarder.url, SECRETS_NAMESPACE: 'team', SECRETS_NAMESPACE_IN: 'path' });
    const inHeader = clientFrom({ SECRETS_ADDR: forwarder.url, SECRETS_NAMESPACE: 'team' });
    try {
      await inPath.kv('secret', { kvVersion: 2 }).write('where', { v: 'ns' });
      assert.deepEqual((await inHeader.kv('secret', { kvVersion: 2 }).read('where')).data, { v: 'ns' });
      const [write, read] = forwarder.seen;
      assert.equal(write!.url, '/v1/team/secret/data/where');
      assert.equal(write!.headers['x-secrets-namespace'], undefined);
      assert.equal(read!.url, '/v1/secret/data/where');
      assert.equal(read!.headers['x-secrets-namespace'], 'team/');
    } finally {
      inPath.close();
      inHeader.close();
      await forwarder.close();
    }
  });

  describe('gantry secrets (in its own process)', () => {
    function gantry(args: string[], env: Record<string, string> = {}): Promise<Ran> {
      return runNode([gantryBin, 'secrets', ...args], {
        env: { PATH: process.env.PATH, HOME: process.env.HOME, GANTRY_LOG: 'warn', SECRETS_ADDR: server.url, SECRETS_TOKEN: server.rootToken, ...env },
        stdin: JSON.stringify(nested(3)),
      });
    }

    it('SEC-LIMIT-JSON-DEPTH: SECRETS_MAX_JSON_DEPTH refuses a put before sending (exit 2); --max-json-depth wins over it', async () => {
      const refused = await gantry(['put', '--kv-version', '2', 'secret/cli-depth', '-'], { SECRETS_MAX_JSON_DEPTH: '3' });
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(refused.stderr, /max_json_depth limit \(4 > 3\).*nothing was sent/);
      assert.deepEqual(requests, []);
      const allowed = await gantry(['put', '--kv-version', '2', '--max-json-depth', '4', 'secret/cli-depth', '-'], { SECRETS_MAX_JSON_DEPTH: '3' });
      assert.equal(allowed.code, 0, allowed.stderr);
      assert.deepEqual(requests, ['POST /v1/secret/data/cli-depth 200']);
    });

    it('SEC-AUTH-BEARER, SEC-LIMIT-REQUEST-SIZE: bad --token-header, --namespace-in and limit flags are usage errors naming the flag (exit 2, nothing sent)', async () => {
      for (const [flags, message] of [
        [['--token-header', 'cookie'], /--token-header must be x-secrets-token or authorization/],
        [['--namespace-in', 'query'], /--namespace-in must be header or path/],
        [['--max-request-size', '32MB'], /--max-request-size must be a whole number of bytes of at least 1, got "32MB"/],
        [['--max-json-object-entry-count', '0'], /--max-json-object-entry-count must be a whole number of at least 1/],
        [['--bearer', '--token-header', 'x-secrets-token'], /--bearer and --token-header x-secrets-token contradict/],
      ] as const) {
        const ran = await gantry(['get', '--kv-version', '2', ...flags, 'secret/cli-depth']);
        assert.equal(ran.code, 2, `${flags.join(' ')}: ${ran.stderr}`);
        assert.match(ran.stderr, message);
      }
      const bad = await gantry(['get', '--kv-version', '2', 'secret/cli-depth'], { SECRETS_TOKEN_HEADER: 'cookie' });
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /SECRETS_TOKEN_HEADER must be/);
      assert.deepEqual(requests, []);
      const ok = await gantry(['get', '--kv-version', '2', '--token-header', 'Authorization', '--field', 'k', 'secret/cli-depth'], {
        SECRETS_TOKEN_HEADER: 'cookie',
      });
      assert.equal(ok.code, 0, ok.stderr);
    });
  });
});
