// `gantry dev secrets` in its own process, and the starter `gantry dev` uses.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { devServers } from '../../../lib/devserver/index.js';
import { DEV_SECRETS_PORT, devSecretsPort } from '../../../lib/devserver/secrets/index.js';
import { SecretsClient } from '../../../lib/secrets/index.js';

const main = fileURLToPath(new URL('../../../lib/cli/main.ts', import.meta.url));
const tsx = createRequire(import.meta.url).resolve('tsx');

function startCli(args: string[], env: Record<string, string> = {}): Promise<{ child: ChildProcess; info: { url: string; token: string; unsealKey: string } }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', pathToFileURL(tsx).href, main, '--json', 'dev', 'secrets', ...args], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, GANTRY_LOG: 'warn', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c: Buffer) => {
      stdout += c.toString();
      try {
        resolve({ child, info: JSON.parse(stdout) });
      } catch {
        // not the whole object yet
      }
    });
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => reject(new Error(`gantry dev secrets exited with ${code}: ${stderr}`)));
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('close', () => resolve());
    child.kill('SIGTERM');
  });
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
      const write = await fetch(`${info.url}/v1/secret/data/cli`, { method: 'POST', headers: { 'X-Secrets-Token': 'cli-root' }, body: JSON.stringify({ data: { k: 'v' } }) });
      assert.equal(write.status, 200);
      const list = await fetch(`${info.url}/v1/secret/metadata/`, { method: 'LIST', headers: { 'X-Secrets-Token': 'cli-root' } });
      assert.deepEqual(((await list.json()) as { data: { keys: string[] } }).data.keys, ['cli']);
      assert.match(await readFile(dataFile, 'utf8'), /"cli"/);
    } finally {
      await stopChild(child);
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
      await stopChild(child);
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

  it('SEC-AUTH-TLS: gantry dev prints the export line for the kv server (http://, its root token), and a client configured by it works', async () => {
    const child = spawn(process.execPath, ['--import', pathToFileURL(tsx).href, main, 'dev'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, GANTRY_LOG: 'warn', GANTRY_DEV_SECRETS_PORT: '0', GANTRY_DEV_REGISTRY_PORT: '0', GANTRY_DEV_PAGEANALYSIS_PORT: '0' },
    });
    try {
      const stdout = await new Promise<string>((resolve, reject) => {
        let text = '';
        let stderr = '';
        child.stdout!.on('data', (c: Buffer) => {
          text += c.toString();
          if (text.includes('Press Ctrl-C')) resolve(text);
        });
        child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
        child.on('close', (code) => reject(new Error(`gantry dev exited with ${code}: ${stderr}`)));
      });
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
    } finally {
      await stopChild(child);
    }
  });
});
