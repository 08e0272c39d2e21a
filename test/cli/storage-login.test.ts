// `gantry storage` with a device login instead of STORAGE_TOKEN: `gantry auth login` against the embedded
// authorization server (approved through its admin API, as a person would on a phone), then the storage commands
// against an embedded storage server that checks the login's access token with the authorization server's tokeninfo.
// A login without a storage scope is 403 (exit 1), a token the service refuses 401 (exit 1, refresh or log in again);
// no login at all is exit 2 and names both ways in.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startOAuthServer, type OAuthServer } from '../../devserver/oauth/index.js';
import { harness, type Harness } from '../devserver/storage/helpers.js';

const bin = fileURLToPath(new URL('../../dist/lib/cli/main.js', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('gantry storage with a gantry auth device login (embedded authorization and storage servers)', function () {
  this.timeout(120_000);
  let oauth: OAuthServer;
  let storage: Harness;
  let client: { id: string; secret: string | null };
  let dir: string;
  const printed: string[] = [];

  before(async () => {
    oauth = await startOAuthServer({ host: '127.0.0.1', port: 0, interval: 1 });
    client = oauth.registerClient({ name: 'storage CLI test' });
    storage = await harness({ tokenInfoUrl: `${oauth.url}/tokeninfo` });
    dir = await mkdtemp(join(tmpdir(), 'gantry-storage-login-'));
  });
  after(async () => {
    await storage.close();
    await oauth.stop();
    await rm(dir, { recursive: true, force: true });
  });

  // No STORAGE_TOKEN, no keyring (no D-Bus session), no kv engine: the login goes to a 0600 file in GANTRY_CONFIG_DIR.
  const env = (): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH,
    HOME: dir,
    GANTRY_CONFIG_DIR: join(dir, 'config'),
    XDG_STATE_HOME: join(dir, 'state'),
    GANTRY_LOG: 'warn',
    GANTRY_AUTH_URL: oauth.url,
    GANTRY_OAUTH_CLIENT_ID: client.id,
    GANTRY_OAUTH_CLIENT_SECRET: client.secret ?? '',
    STORAGE_BASE_URL: storage.server.url,
  });

  function gantry(args: string[], approve = false): Promise<Run> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [bin, ...args], { env: env(), cwd: dir });
      let stdout = '';
      let stderr = '';
      let approved = false;
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk;
        // login --json hands the code on as one JSON line on stderr: approve it as the person would.
        const line = stderr.split('\n').find((l) => l.startsWith('{') && l.includes('user_code'));
        if (approve && line && !approved) {
          approved = true;
          setTimeout(() => oauth.approve((JSON.parse(line) as { user_code: string }).user_code), 200).unref();
        }
      });
      child.on('error', reject);
      child.on('close', (code) => {
        printed.push(stdout, stderr);
        resolve({ code, stdout, stderr });
      });
    });
  }

  it('STO-FILES-LIST STO-FILES-INSERT STO-ABOUT-GET: after `gantry auth login --scope storage.file`, ls, put and about work without STORAGE_TOKEN', async () => {
    const login = await gantry(['auth', 'login', '--json', '--store', 'file', '--scope', 'openid,email,storage.file'], true);
    assert.equal(login.code, 0, login.stderr);
    assert.match((JSON.parse(login.stdout) as { scope: string }).scope, /storage\.file/);

    await writeFile(join(dir, 'hello.txt'), 'hello from a device login\n');
    const put = await gantry(['storage', 'put', 'hello.txt', '--json']);
    assert.equal(put.code, 0, put.stderr);
    const file = JSON.parse(put.stdout) as { id: string; title: string };
    assert.equal(file.title, 'hello.txt');
    const ls = await gantry(['storage', 'ls']);
    assert.equal(ls.code, 0, ls.stderr);
    assert.match(ls.stdout, new RegExp(`^${file.id}\\s+hello\\.txt\\s+text/plain\\s+26\\s`, 'm'));
    const about = await gantry(['storage', 'about']);
    assert.equal(about.code, 0, about.stderr);
    assert.match(about.stdout, new RegExp(`^token\\s+from the login of profile default at ${oauth.url.replace(/[.:/]/g, '\\$&')}$`, 'm'));
    assert.ok(
      oauth.requestLog().some((entry) => entry.path === '/tokeninfo'),
      'the storage server asked the authorization server about the token',
    );

    // The access token the command used is printed by `gantry auth token` only (its job), never by a storage command.
    const token = (await gantry(['auth', 'token'])).stdout.trim();
    assert.ok(token.length > 10);
    assert.ok(
      !printed
        .filter((text) => text.trim() !== token)
        .join('\n')
        .includes(token),
      'a storage command printed the access token',
    );
  });

  it('a login without a storage scope is refused by the service: 403 insufficientPermissions, exit 1, with the hint to log in with the scope', async () => {
    const login = await gantry(['auth', 'login', '--json', '--store', 'file', '--profile', 'no-storage', '--scope', 'openid,email'], true);
    assert.equal(login.code, 0, login.stderr);
    const ls = await gantry(['storage', 'ls', '--profile', 'no-storage']);
    assert.equal(ls.code, 1, ls.stderr);
    assert.match(ls.stderr, /answered 403 insufficientPermissions/);
    assert.match(
      ls.stderr,
      /^hint: the login of profile no-storage at \S+ lacks a storage scope: log in again with `gantry auth login --scope storage\.file` \(and the same --profile\)$/m,
    );
  });

  it('a login whose token the service refuses: 401 (after the one refresh), exit 1, the hint to refresh or log in again — not to set STORAGE_TOKEN', async () => {
    // A second storage server that knows only its own fixed token: the login's tokens, fresh or refreshed, are not it.
    const stranger = await harness();
    try {
      const ls = await gantry(['storage', 'ls', '--base-url', stranger.server.url]);
      assert.equal(ls.code, 1, ls.stderr);
      assert.match(ls.stderr, /answered 401 authError/);
      assert.match(
        ls.stderr,
        /^hint: the token of the login of profile default at \S+ was refused: run `gantry auth refresh`, or `gantry auth login --scope storage\.file` \(with the same --profile\)$/m,
      );
    } finally {
      await stranger.close();
    }
  });

  it('a profile nobody logged in to: exit 2 (not logged in: a setup to fix, nothing sent), the hint names `gantry auth login --scope storage.file` and STORAGE_TOKEN; nothing reaches the storage server', async () => {
    const before = storage.server.stats().requests;
    const ls = await gantry(['storage', 'ls', '--profile', 'nobody']);
    assert.equal(ls.code, 2, ls.stderr);
    assert.match(ls.stderr, /^error: not logged in to \S+ as client \S+ \(profile nobody\)$/m);
    assert.match(ls.stderr, /^hint: log in with `gantry auth login --scope storage\.file --profile nobody` .*or set STORAGE_TOKEN$/m);
    assert.equal(storage.server.stats().requests, before);
  });
});
