// The storage resources without STORAGE_TOKEN: the `gantry auth` login of the profile, made against the embedded
// authorization server (`gantry auth login`, approved through its admin API as a person would on a phone), read in
// the Pulumi plugin at run time — through the engine harness (the packed gantry, the real dynamic-provider plugin) —
// against an embedded storage server that checks tokens with the authorization server's tokeninfo. Access tokens
// live 5 s, so every operation refreshes the login; the access, refresh and id tokens and the client secret are
// searched for in the state, every `__provider`, the outputs and everything printed.
import assert from 'node:assert/strict';
import { restoreProcessEnv } from '../process-env.js';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileTokenStore } from '../../lib/auth/store/index.js';
import type { StoredLogin } from '../../lib/auth/index.js';
import { startOAuthServer, type OAuthServer } from '../../devserver/oauth/index.js';
import { startStorageServer, type StorageServer } from '../../devserver/storage/index.js';
import { storageFolderOperations } from '../../providers/storage-folder.js';
import { exited, spawnGantry } from '../cli/gantry-process.js';
import { makeTempDir, removeTempDir } from '../harness/consumer.js';
import { assertProviderHygiene, Harness, type Stack } from '../harness/index.js';

const programs = path.join(path.dirname(fileURLToPath(import.meta.url)), 'programs');
const program = path.join(programs, 'storage.mjs');

describe('StorageFolder, StorageFile without STORAGE_TOKEN: the gantry auth login, read and refreshed in the plugin', function () {
  this.timeout(600_000);
  let oauth: OAuthServer;
  let client: { id: string; secret: string | null };
  let storage: StorageServer;
  let dir: string;
  let configDir: string;
  let stack: Stack | undefined;
  const requests: string[] = [];

  before(async () => {
    dir = await makeTempDir('gantry-storage-provider-login-');
    configDir = path.join(dir, 'config');
    await mkdir(path.join(dir, 'server'));
    oauth = await startOAuthServer({ host: '127.0.0.1', port: 0, interval: 1, accessTokenTtl: 5 });
    client = oauth.registerClient({ name: 'storage provider test' });
    storage = await startStorageServer({ dir: path.join(dir, 'server'), tokenInfoUrl: `${oauth.url}/tokeninfo`, log: (line) => requests.push(line) });
  });
  afterEach(async () => {
    await stack?.dispose();
    stack = undefined;
  });
  after(async () => {
    await storage?.stop();
    await oauth?.stop();
    await removeTempDir(dir);
  });

  /** What `gantry auth login` and the plugin share: where the login is kept (a 0600 file: no keyring here). */
  const loginEnv = () => ({
    HOME: dir,
    GANTRY_CONFIG_DIR: configDir,
    XDG_STATE_HOME: path.join(dir, 'state'),
    GANTRY_AUTH_URL: oauth.url,
    GANTRY_OAUTH_CLIENT_ID: client.id,
  });

  async function login(scopes: string): Promise<void> {
    const child = spawnGantry(['auth', 'login', '--json', '--store', 'file', '--scope', scopes], {
      ...loginEnv(),
      GANTRY_OAUTH_CLIENT_SECRET: client.secret ?? '',
    });
    let stderr = '';
    let approved = false;
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk;
      const line = stderr.split('\n').find((l) => l.startsWith('{') && l.includes('user_code'));
      if (line && !approved) {
        approved = true;
        setTimeout(() => oauth.approve((JSON.parse(line) as { user_code: string }).user_code), 200).unref();
      }
    });
    assert.equal(await exited(child), 0, stderr);
  }

  async function stored(): Promise<StoredLogin> {
    const login = await new FileTokenStore(configDir).read({ authUrl: oauth.url, clientId: client.id, profile: 'default' });
    assert.ok(login, 'the login is kept in the file store');
    return login;
  }

  it('STO-FILES-INSERT STO-FILES-GET STO-FILES-TRASH: with no STORAGE_TOKEN, create, refresh and delete use the login of the profile, its access token refreshed as it runs out; no token and no client secret in the state, a __provider, an output or a message', async () => {
    await login('openid,email,storage.file');
    const first = await stored();
    assert.match(first.tokens.scope, /storage\.file/);
    assert.ok(first.tokens.refreshToken);
    await new Promise((resolve) => setTimeout(resolve, 1500));

    // The client secret comes from the stack configuration (a Pulumi secret), the rest from the plugin's environment.
    const s = (stack = await Harness.consumer({
      kind: 'esm',
      env: { STORAGE_BASE_URL: storage.url, ...loginEnv() },
      ...(client.secret ? { config: { 'gantry:oauthClientSecret': { secret: client.secret } } } : {}),
    }));
    const created = await s.up(program, {
      folders: [{ name: 'reports' }],
      files: [{ name: 'report', parent: '@reports', content: 'made with a device login', mimeType: 'text/plain' }],
    });
    assert.deepEqual(created.errors, []);
    assert.deepEqual(created.plan, { reports: 'create', report: 'create' });
    const after = await stored();
    assert.notEqual(after.tokens.accessToken, first.tokens.accessToken, 'the plugin refreshed the login and kept the new access token');
    assert.ok(after.tokens.obtainedAt > first.tokens.obtainedAt);
    assert.ok(
      requests.some((line) => line.startsWith('POST /upload/storage/v2/files')),
      'the file was uploaded',
    );

    const refreshed = await s.refresh();
    assert.deepEqual(refreshed.errors, []);
    const destroyed = await s.destroy();
    assert.deepEqual(destroyed.errors, []);
    const last = await stored();

    const canaries = [first, after, last]
      .flatMap((l) => [l.tokens.accessToken, l.tokens.refreshToken, l.tokens.idToken])
      .filter((t): t is string => typeof t === 'string');
    if (client.secret) canaries.push(client.secret);
    for (const result of [created, refreshed]) await assertProviderHygiene(s, result, canaries);
    for (const result of [created, refreshed, destroyed]) {
      const outputs = JSON.stringify(Object.values(result.resources).map((r) => r.outputs));
      assert.ok(!canaries.some((c) => outputs.includes(c)), 'a token in an output');
    }
  });

  it('no STORAGE_TOKEN and no login of the profile: the usage error names both ways in, and nothing is sent', async () => {
    const saved = { ...process.env };
    for (const name of ['STORAGE_TOKEN', 'GANTRY_AUTH_URL', 'GANTRY_OAUTH_CLIENT_ID', 'GANTRY_AUTH_PROFILE']) delete process.env[name];
    Object.assign(process.env, { STORAGE_BASE_URL: storage.url, GANTRY_CONFIG_DIR: configDir, GANTRY_AUTH_PROFILE: 'nobody' });
    const count = requests.length;
    try {
      await assert.rejects(
        storageFolderOperations.create({}, { name: 'x', parent: 'root' }),
        (error: Error & { hint?: string; exitCode?: number; code?: string }) => {
          assert.equal(
            error.message,
            'StorageFolder: no storage token: STORAGE_TOKEN is not set in the environment Pulumi runs the provider in, and not logged in (profile nobody)',
          );
          assert.match(error.hint ?? '', /export STORAGE_TOKEN before `pulumi up`, or log in with `gantry auth login --scope storage\.file`/);
          assert.equal(error.exitCode, 2);
          assert.equal(error.code, 'STORAGE_NO_TOKEN');
          return true;
        },
      );
      assert.equal(requests.length, count, 'nothing reached the storage server');
    } finally {
      restoreProcessEnv(saved);
    }
  });
});
