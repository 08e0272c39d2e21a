import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { withServer, client } from './helpers.js';
import { startSecretsServer } from '../../../devserver/secrets/index.js';

describe('embedded kv server: persistence to a data file', () => {
  let dir: string;
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'gantry-secrets-data-'))));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('keeps secrets, metadata, config, policies and login tokens across a restart; tokens are stored hashed', async () => {
    const dataFile = join(dir, 'secrets.json');
    const first = await withServer({ dataFile, users: [{ username: 'u', password: 'p', policies: ['r'] }], policies: { r: { 'secret/data/*': ['read'] } } });
    await first.call('POST', 'secret/data/app', { body: { data: { password: 'canary-value-1' } } });
    await first.call('POST', 'secret/data/app', { body: { data: { password: 'canary-value-2' } } });
    await first.call('POST', 'secret/metadata/app', { body: { custom_metadata: { owner: 'me' } } });
    await first.call('POST', 'secret/config', { body: { max_versions: 5 } });
    await first.call('POST', 'kv/plain', { body: { k: 'v' } });
    const userToken = (await first.call('POST', 'auth/userpass/login/u', { token: null, body: { password: 'p' } })).body.auth.client_token;
    await first.server.stop();

    const text = await readFile(dataFile, 'utf8');
    assert.equal((await stat(dataFile)).mode & 0o777, 0o600, 'the data file is readable by its owner only');
    assert.ok(!text.includes(userToken), 'no token in plain text in the data file');
    assert.ok(!text.includes('"p"'), 'no password in plain text');

    const second = await withServer({ dataFile });
    try {
      const read = await second.call('GET', 'secret/data/app');
      assert.deepEqual(read.body.data.data, { password: 'canary-value-2' });
      assert.deepEqual((await second.call('GET', 'secret/data/app?version=1')).body.data.data, { password: 'canary-value-1' });
      assert.deepEqual((await second.call('GET', 'secret/metadata/app')).body.data.custom_metadata, { owner: 'me' });
      assert.equal((await second.call('GET', 'secret/config')).body.data.max_versions, 5);
      assert.deepEqual((await second.call('GET', 'kv/plain')).body.data, { k: 'v' });
      assert.equal((await second.call('GET', 'secret/data/app', { token: userToken })).status, 200, 'the login token survived');
    } finally {
      await second.server.stop();
    }
  });

  it('a change that cannot be written to the data file is a 500 and is not applied', async () => {
    const dataFile = join(dir, 'secrets.json');
    const { server, call } = await withServer({ dataFile });
    try {
      await call('POST', 'secret/data/k', { body: { data: { v: 'kept' } } });
      // a non-empty folder where the file was: the rename over it fails whoever runs the test, root included
      await rm(dataFile);
      await mkdir(join(dataFile, 'blocker'), { recursive: true });
      const failed = await call('POST', 'secret/data/k', { body: { data: { v: 'lost' } } });
      assert.equal(failed.status, 500);
      assert.match(failed.body.errors[0], /could not be written to the data file, and was not applied/);
      const read = await call('GET', 'secret/data/k');
      assert.deepEqual(read.body.data.data, { v: 'kept' });
      assert.equal(read.body.data.metadata.version, 1);
      await rm(dataFile, { recursive: true });
      assert.equal((await call('POST', 'secret/data/k', { body: { data: { v: 'again' } } })).body.data.version, 2);
    } finally {
      await server.stop();
    }
  });

  it('refuses to start on a data file that is not its own, and leaves the file as it was', async () => {
    const dataFile = join(dir, 'other.json');
    await writeFile(dataFile, '{"something":"else"}');
    await assert.rejects(startSecretsServer({ dataFile }), /not a secrets dev server data file/);
    await writeFile(join(dir, 'broken.json'), '{"format":');
    await assert.rejects(startSecretsServer({ dataFile: join(dir, 'broken.json') }), /not valid JSON/);
    assert.equal(await readFile(dataFile, 'utf8'), '{"something":"else"}');
  });

  it('killed with SIGKILL in the middle of writes: the data file is never half-written, reloads, and holds every acknowledged write', async function () {
    this.timeout(60_000);
    const dataFile = join(dir, 'crash.json');
    const script = fileURLToPath(new URL('./child-server.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', script, dataFile], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout! }).once('line', resolve);
        child.once('exit', (code) => reject(new Error(`child exited early (${code})`)));
      });
      const { url, token } = JSON.parse(line) as { url: string; token: string };
      const acknowledged = new Map<string, number>();
      const blob = 'x'.repeat(200_000);
      let stop = false;
      const writer = async (w: number) => {
        for (let i = 0; !stop; i++) {
          try {
            const r = await fetch(`${url}/v1/secret/data/w${w}`, {
              method: 'POST',
              headers: { 'X-Secrets-Token': token },
              body: JSON.stringify({ data: { i, blob } }),
            });
            if (r.status === 200) acknowledged.set(`w${w}`, ((await r.json()) as { data: { version: number } }).data.version);
          } catch {
            return; // the server is gone: a clear connection error, not a hang
          }
        }
      };
      const writers = Array.from({ length: 4 }, (_, w) => writer(w));
      // Kill it mid-writes: once some writes were acknowledged (a loaded machine takes longer to get there), then a
      // little later so more are in flight.
      const waitUntil = Date.now() + 30_000;
      while (acknowledged.size === 0 && Date.now() < waitUntil) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 300));
      child.kill('SIGKILL');
      stop = true;
      await Promise.all(writers);
      assert.ok(acknowledged.size > 0, 'some writes were acknowledged before the kill');

      const text = await readFile(dataFile, 'utf8');
      assert.doesNotThrow(() => JSON.parse(text), 'the data file is complete JSON');
      const reloaded = await startSecretsServer({ dataFile, rootToken: 'again' });
      try {
        const call = client(reloaded);
        for (const [key, version] of acknowledged) {
          const meta = await call('GET', `secret/metadata/${key}`);
          assert.equal(meta.status, 200, key);
          assert.ok(meta.body.data.current_version >= version, `${key}: acknowledged version ${version} is on disk`);
        }
        assert.deepEqual(
          (await readdir(dir)).filter((n) => n.endsWith('.tmp')),
          [],
          'temporaries of the dead process are cleaned up',
        );
      } finally {
        await reloaded.stop();
      }
    } finally {
      child.kill('SIGKILL');
    }
  });
});
