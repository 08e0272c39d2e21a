// `gantry dev secrets` in its own process, and the starter `gantry dev` uses.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { devServers } from '../../../devserver/index.js';
import { DEV_SECRETS_PORT, devSecretsPort, startSecretsServer } from '../../../devserver/secrets/index.js';
import { SecretsClient } from '../../../lib/secrets/index.js';
import { makeTestPki, type TestPki } from '../../peers/tls.js';
import { startGantry, stopGantry } from '../../cli/gantry-process.js';

interface Info {
  url: string;
  token: string;
  unsealKey: string;
  mounts: Array<{ path: string; version: number }>;
}

/** `gantry --json dev secrets <args>`: resolves with the JSON object it prints once it listens. */
async function startCli(args: string[], env: Record<string, string> = {}): Promise<{ child: ChildProcess; info: Info }> {
  const { child, value } = await startGantry(
    ['--json', 'dev', 'secrets', ...args],
    (stdout) => {
      try {
        return JSON.parse(stdout) as Info;
      } catch {
        return undefined; // not the whole object yet
      }
    },
    env,
  );
  return { child, info: value };
}

const banner = (stdout: string) => (stdout.includes('Press Ctrl-C') ? stdout : undefined);

/** The same, without --json: resolves with the banner once it is printed. */
async function startCliText(args: string[]): Promise<{ child: ChildProcess; stdout: string }> {
  const { child, value } = await startGantry(['dev', 'secrets', ...args], banner);
  return { child, stdout: value };
}

describe('devserver/secrets: the command and the gantry dev starter', function () {
  this.timeout(60000);

  it('gantry dev secrets --port 0 --root-token --data-file serves the API and keeps data in the file', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'gantry-dev-secrets-'));
    const dataFile = path.join(dir, 'data.json');
    const { child, info } = await startCli(['--port', '0', '--root-token', 'cli-root', '--data-file', dataFile]);
    try {
      assert.match(info.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(info.token, 'cli-root');
      const write = await fetch(`${info.url}/v1/secret/data/cli`, {
        method: 'POST',
        headers: { 'X-Secrets-Token': 'cli-root' },
        body: JSON.stringify({ data: { k: 'v' } }),
      });
      assert.equal(write.status, 200);
      const list = await fetch(`${info.url}/v1/secret/metadata/`, { method: 'LIST', headers: { 'X-Secrets-Token': 'cli-root' } });
      assert.deepEqual(((await list.json()) as { data: { keys: string[] } }).data.keys, ['cli']);
      assert.match(await readFile(dataFile, 'utf8'), /"cli"/);
    } finally {
      await stopGantry(child);
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a random root token when none is given, and usage errors for bad flags', async () => {
    const { child, info } = await startCli(['--port', '0']);
    try {
      assert.match(info.token, /^hvs\.[A-Za-z0-9_-]{20,}$/);
      const self = await fetch(`${info.url}/v1/auth/token/lookup-self`, { headers: { 'X-Secrets-Token': info.token } });
      assert.equal(self.status, 200);
    } finally {
      await stopGantry(child);
    }
    await assert.rejects(startCli(['--port', 'abc']), /exited with 2/);
    await assert.rejects(startCli(['--port', '0', '--tls-cert', 'x.pem']), /exited with 2/);
  });

  it('gantry dev lists the secrets server; GANTRY_DEV_SECRETS_PORT picks the port', async () => {
    assert.ok(devServers.some((s) => s.name === 'secrets'));
    assert.equal(devSecretsPort({}), DEV_SECRETS_PORT);
    assert.equal(devSecretsPort({ GANTRY_DEV_SECRETS_PORT: '0' }), 0);
    for (const bad of ['-1', '65536', 'x']) assert.throws(() => devSecretsPort({ GANTRY_DEV_SECRETS_PORT: bad }), /GANTRY_DEV_SECRETS_PORT/);
    const saved = process.env.GANTRY_DEV_SECRETS_PORT;
    process.env.GANTRY_DEV_SECRETS_PORT = '0';
    const dir = await mkdtemp(path.join(tmpdir(), 'gantry-dev-secrets-'));
    try {
      const server = await devServers.find((s) => s.name === 'secrets')!.start({ host: '127.0.0.1', examplesDir: dir, stateDir: dir });
      try {
        assert.ok(server.credentials.token);
        const r = await fetch(`${server.url}/v1/sys/internal/ui/mounts/secret`, { headers: { 'X-Secrets-Token': server.credentials.token } });
        assert.equal(((await r.json()) as { data: { options: { version: string } } }).data.options.version, '2');
      } finally {
        await server.stop();
      }
    } finally {
      if (saved === undefined) delete process.env.GANTRY_DEV_SECRETS_PORT;
      else process.env.GANTRY_DEV_SECRETS_PORT = saved;
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('SEC-AUTH-TOKEN-REQUIRED: gantry dev prints the export line for the kv server (plain http://, its root token); a client configured by it works, and nothing works without the token', async () => {
    const { child, value: stdout } = await startGantry(['dev'], banner, {
      GANTRY_DEV_SECRETS_PORT: '0',
      GANTRY_DEV_REGISTRY_PORT: '0',
      GANTRY_DEV_PAGEANALYSIS_PORT: '0',
    });
    try {
      const line = /^export (SECRETS_ADDR=\S+ SECRETS_TOKEN=\S+)$/m.exec(stdout);
      assert.ok(line, stdout);
      const env = Object.fromEntries(line[1]!.split(' ').map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
      assert.match(env.SECRETS_ADDR!, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.ok(stdout.includes(`token=${env.SECRETS_TOKEN}`), 'the same token as in the table');
      const client = new SecretsClient({ sources: { env, pulumi: undefined } });
      try {
        await client.kv('secret').write('from-dev', { k: 'v' });
        assert.deepEqual((await client.kv('secret').read('from-dev')).data, { k: 'v' });
      } finally {
        client.close();
      }
      const anonymous = await fetch(`${env.SECRETS_ADDR}/v1/secret/data/from-dev`);
      assert.equal(anonymous.status, 403);
    } finally {
      await stopGantry(child);
    }
  });

  it('SEC-KV1-PATH, SEC-KV2-DATA-PATH, SEC-MOUNT-DEFAULT-SECRET: --mount <path>=kv1|kv2 replaces the default mounts, and the banner lists the mounts it serves', async () => {
    const defaults = await startCliText(['--port', '0']);
    try {
      assert.match(defaults.stdout, /^kv secrets server on http:\/\/127\.0\.0\.1:\d+ \(kv\/ kv v1, secret\/ kv v2\), in memory$/m);
    } finally {
      await stopGantry(defaults.child);
    }
    const custom = await startCliText(['--port', '0', '--mount', 'apps/=kv2', '--mount', '/legacy/team=KV1']);
    try {
      assert.match(custom.stdout, /^kv secrets server on http:\/\/\S+ \(apps\/ kv v2, legacy\/team\/ kv v1\), in memory$/m);
    } finally {
      await stopGantry(custom.child);
    }
    const { child, info } = await startCli(['--port', '0', '--root-token', 'r', '--mount', 'apps/=kv2', '--mount', 'legacy/=kv1', '--namespace', 'ns1']);
    try {
      assert.deepEqual(info.mounts, [
        { path: 'apps/', version: 2 },
        { path: 'legacy/', version: 1 },
      ]);
      const headers = { 'X-Secrets-Token': 'r' };
      const v2 = await fetch(`${info.url}/v1/apps/data/db`, { method: 'POST', headers, body: JSON.stringify({ data: { k: 'v2' } }) });
      assert.equal(v2.status, 200);
      const v1 = await fetch(`${info.url}/v1/legacy/db`, { method: 'POST', headers, body: JSON.stringify({ k: 'v1' }) });
      assert.equal(v1.status, 204);
      assert.deepEqual(((await (await fetch(`${info.url}/v1/legacy/db`, { headers })).json()) as { data: unknown }).data, { k: 'v1' });
      // the mounts are in every namespace, and the default ones are gone
      const inNs = await fetch(`${info.url}/v1/sys/internal/ui/mounts/apps`, { headers: { ...headers, 'X-Secrets-Namespace': 'ns1' } });
      assert.equal(((await inNs.json()) as { data: { options: { version: string } } }).data.options.version, '2');
      const gone = await fetch(`${info.url}/v1/secret/data/db`, { headers });
      assert.equal(gone.status, 404);
    } finally {
      await stopGantry(child);
    }
  });

  it('SEC-LIMIT-REQUEST-SIZE, SEC-LIMIT-JSON-DEPTH, SEC-LIMIT-JSON-STRING-LENGTH, SEC-LIMIT-JSON-OBJECT-ENTRIES, SEC-LIMIT-JSON-ARRAY-ELEMENTS: the listener limits from flags', async () => {
    const { child, info } = await startCli([
      '--port',
      '0',
      '--root-token',
      'r',
      '--max-request-size',
      '300',
      '--max-json-depth',
      '3',
      '--max-json-string-value-length',
      '8',
      '--max-json-object-entry-count',
      '3',
      '--max-json-array-element-count',
      '2',
    ]);
    const post = async (body: string) => {
      const r = await fetch(`${info.url}/v1/kv/limits`, { method: 'POST', headers: { 'X-Secrets-Token': 'r' }, body });
      return { status: r.status, errors: ((await r.json().catch(() => ({}))) as { errors?: string[] }).errors };
    };
    try {
      assert.deepEqual(await post(JSON.stringify({ a: { b: { c: 'x' } } })), { status: 204, errors: undefined }, 'depth 3 is within 3');
      assert.deepEqual(await post(JSON.stringify({ pad: 'x'.repeat(5) + ' '.repeat(300) })), { status: 413, errors: ['http: request body too large'] });
      assert.deepEqual(await post(JSON.stringify({ a: { b: { c: [1] } } })), { status: 400, errors: ['JSON input exceeds allowed nesting depth'] });
      assert.deepEqual(await post(JSON.stringify({ a: 'x'.repeat(9) })), { status: 400, errors: ['JSON string value exceeds allowed length'] });
      assert.deepEqual(await post(JSON.stringify({ a: 1, b: 2, c: 3, d: 4 })), { status: 400, errors: ['JSON object exceeds allowed entry count'] });
      assert.deepEqual(await post(JSON.stringify({ a: [1, 2, 3] })), { status: 400, errors: ['JSON array exceeds allowed element count'] });
    } finally {
      await stopGantry(child);
    }
  });

  it('bad --mount and limit flags are usage errors (exit 2)', async () => {
    for (const [args, message] of [
      [['--mount', 'secret'], /--mount takes <path>=kv1\|kv2, got "secret"/],
      [['--mount', 'secret/=kv3'], /the engine must be kv1 or kv2, got "kv3"/],
      [['--mount', 'sys/=kv2'], /sys\/ and auth\/ are reserved/],
      [['--mount', 'auth/x=kv1'], /sys\/ and auth\/ are reserved/],
      [['--mount', '=kv2'], /"" is not a mount path/],
      [['--mount', 'a//b=kv2'], /"a\/\/b" is not a mount path/],
      [['--mount', 'a./=kv2'], /"a\.\/" is not a mount path/],
      [['--mount', 'a/=kv2', '--mount', 'a/b=kv1'], /--mount a\/b\/ is inside --mount a\/: mounts cannot be nested/],
      [['--mount', 'a=kv2', '--mount', 'a/=kv1'], /--mount a\/ is given twice/],
      [['--max-request-size', '32MB'], /--max-request-size must be a whole number of at least 1, got "32MB"/],
      [['--max-json-depth', '0'], /--max-json-depth must be a whole number/],
      [['--max-json-array-element-count', '-1'], /--max-json-array-element-count must be a whole number/],
    ] as const) {
      await assert.rejects(startCli(['--port', '0', ...args]), (e: Error) => /exited with 2/.test(e.message) && message.test(e.message), args.join(' '));
    }
  });

  describe('TLS', () => {
    let pki: TestPki;
    before(() => {
      pki = makeTestPki();
    });
    after(() => pki.remove());

    it('SEC-AUTH-TLS: --tls-cert/--tls-key serve https; a client trusting the CA made in the test reads and writes, one skipping verification too, one trusting another CA fails', async () => {
      const text = await startCliText(['--port', '0', '--tls-cert', pki.certFile, '--tls-key', pki.keyFile]);
      try {
        assert.match(text.stdout, /^export SECRETS_ADDR=https:\/\/127\.0\.0\.1:\d+ SECRETS_TOKEN=\S+$/m);
        assert.ok(text.stdout.includes(`TLS: clients must trust the CA that signed ${pki.certFile} (SECRETS_CACERT or SECRETS_CAPATH)`), text.stdout);
      } finally {
        await stopGantry(text.child);
      }
      const { child, info } = await startCli(['--port', '0', '--tls-cert', pki.certFile, '--tls-key', pki.keyFile]);
      const sources = (env: Record<string, string>) => ({
        sources: { env: { SECRETS_ADDR: info.url, SECRETS_TOKEN: info.token, SECRETS_MAX_RETRIES: '0', ...env }, pulumi: undefined },
      });
      const trusting = new SecretsClient(sources({ SECRETS_CACERT: pki.caFile }));
      const skipping = new SecretsClient(sources({ SECRETS_SKIP_VERIFY: 'true' }));
      const other = new SecretsClient(sources({ SECRETS_CACERT: pki.otherCaFile }));
      try {
        assert.match(info.url, /^https:\/\/127\.0\.0\.1:\d+$/);
        await trusting.kv('secret').write('over-tls', { k: 'v' });
        assert.deepEqual((await trusting.kv('secret').read('over-tls')).data, { k: 'v' });
        await trusting.kv('kv').write('over-tls', { v: 1 });
        assert.deepEqual(await trusting.kv('kv').list(''), ['over-tls']);
        assert.deepEqual((await skipping.kv('secret').read('over-tls')).data, { k: 'v' });
        const refused = await other
          .kv('secret', { kvVersion: 2 })
          .read('over-tls')
          .catch((e: unknown) => e);
        assert.ok(refused instanceof Error && /certificate/i.test(refused.message), String(refused));
      } finally {
        trusting.close();
        skipping.close();
        other.close();
        await stopGantry(child);
      }
    });

    it('SEC-AUTH-TLS: --tls-client-ca requires a client certificate signed by that CA (mutual TLS); --tls-client-ca without --tls-cert is a usage error', async () => {
      const text = await startCliText(['--port', '0', '--tls-cert', pki.certFile, '--tls-key', pki.keyFile, '--tls-client-ca', pki.caFile]);
      try {
        assert.ok(
          text.stdout.includes(`mutual TLS: clients must present a certificate signed by a CA in ${pki.caFile} (SECRETS_CLIENT_CERT and SECRETS_CLIENT_KEY)`),
          text.stdout,
        );
      } finally {
        await stopGantry(text.child);
      }
      const { child, info } = await startCli(['--port', '0', '--tls-cert', pki.certFile, '--tls-key', pki.keyFile, '--tls-client-ca', pki.caFile]);
      const env = { SECRETS_ADDR: info.url, SECRETS_TOKEN: info.token, SECRETS_MAX_RETRIES: '0', SECRETS_CACERT: pki.caFile };
      const mutual = new SecretsClient({
        sources: { env: { ...env, SECRETS_CLIENT_CERT: pki.clientCertFile, SECRETS_CLIENT_KEY: pki.clientKeyFile }, pulumi: undefined },
      });
      const anonymous = new SecretsClient({ sources: { env, pulumi: undefined } });
      try {
        assert.equal((info as Info & { clientCertificateRequired: boolean }).clientCertificateRequired, true);
        await mutual.kv('secret').write('mtls', { k: 'v' });
        assert.deepEqual((await mutual.kv('secret').read('mtls')).data, { k: 'v' });
        await assert.rejects(anonymous.kv('secret', { kvVersion: 2 }).read('mtls'), (e: Error) => e.name === 'SecretsConnectionError');
      } finally {
        mutual.close();
        anonymous.close();
        await stopGantry(child);
      }
      await assert.rejects(startCli(['--port', '0', '--tls-client-ca', pki.caFile]), /exited with 2: .*--tls-client-ca needs --tls-cert/s);
      await assert.rejects(startSecretsServer({ tls: { cert: pki.cert, key: pki.key, requestCert: true } }), /tls\.requestCert needs tls\.ca/);
    });
  });
});
