// `gantry auth` verbs agree with each other and with docs/auth.md: token does not hand out a login status found
// revoked; status reports the store as it is used now (the file's mode, today's SECRETS_ADDR) and the expiry after
// its own refresh; logout against a server it cannot reach names --forget. The built command against the embedded
// authorization and secrets servers.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startOAuthServer, type OAuthServer } from '../../devserver/oauth/index.js';
import { startSecretsServer, type SecretsServer } from '../../devserver/secrets/index.js';

const bin = fileURLToPath(new URL('../../dist/lib/cli/main.js', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('DOCS-AGREE-AUTH: gantry auth verbs agree with each other and with docs/auth.md', function () {
  this.timeout(120_000);
  let server: OAuthServer;
  let client: { id: string; secret: string | null };
  let configDir: string;

  before(async () => {
    server = await startOAuthServer({ host: '127.0.0.1', port: 0, interval: 1 });
    client = server.registerClient({ name: 'agree' });
    configDir = await mkdtemp(join(tmpdir(), 'gantry-auth-agree-'));
  });
  after(async () => {
    await server.stop();
    await rm(configDir, { recursive: true, force: true });
  });

  function env(extra: Record<string, string | undefined> = {}, at: OAuthServer = server, id = client): NodeJS.ProcessEnv {
    const base: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: configDir,
      GANTRY_CONFIG_DIR: configDir,
      GANTRY_AUTH_URL: at.url,
      GANTRY_OAUTH_CLIENT_ID: id.id,
      GANTRY_OAUTH_CLIENT_SECRET: id.secret!,
      GANTRY_API_URL: at.url,
    };
    for (const [name, value] of Object.entries(extra)) {
      if (value === undefined) delete base[name];
      else base[name] = value;
    }
    return base;
  }
  function gantry(args: string[], environment: NodeJS.ProcessEnv = env(), approveAt: OAuthServer = server): Promise<Run> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [bin, ...args], { env: environment });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk;
        const code = /"user_code":"([^"]+)"/.exec(chunk.toString())?.[1];
        if (code) setTimeout(() => approveAt.approve(code), 200).unref();
      });
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  }

  it("DOCS-AGREE-AUTH: once status has found the login revoked, token exits 1 with status's advice and prints no token", async () => {
    const profile = ['--profile', 'revoked'];
    assert.equal((await gantry(['auth', 'login', '--json', '--store', 'file', ...profile])).code, 0);
    const before = await gantry(['auth', 'token', ...profile]);
    assert.equal(before.code, 0, before.stderr);
    server.userRevokesAccess('dev', client.id);
    const status = await gantry(['auth', 'status', ...profile]);
    assert.equal(status.code, 1, status.stdout);
    assert.match(status.stdout, /revoked or expired at the server: run `gantry auth login`/);
    const token = await gantry(['auth', 'token', ...profile]);
    assert.equal(token.code, 1, token.stderr);
    assert.equal(token.stdout, '', 'no token of an ended grant');
    assert.match(token.stderr, /no longer accepts this login's refresh token/);
    assert.match(token.stderr, /hint: .*run `gantry auth login` again/);
  });

  it("DOCS-AGREE-AUTH: status shows the access token's expiry after the refresh its own check made, the one token then hands out", async () => {
    const profile = ['--profile', 'refreshed'];
    assert.equal((await gantry(['auth', 'login', '--json', '--store', 'file', ...profile])).code, 0);
    const first = JSON.parse((await gantry(['auth', 'token', '--json', ...profile])).stdout) as { accessToken: string; expiresAt: string };
    // The server ends the access token early: status's check gets a 401, refreshes silently and says it is valid.
    await fetch(`${server.url}/_gantry/tokens/expire`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: first.accessToken }),
    });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const status = await gantry(['auth', 'status', '--json', ...profile]);
    assert.equal(status.code, 0, status.stderr);
    const [row] = JSON.parse(status.stdout) as Array<{ server: string; accessTokenExpiresAt: string }>;
    assert.equal(row!.server, 'valid at the server');
    const after = JSON.parse((await gantry(['auth', 'token', '--json', ...profile])).stdout) as { accessToken: string; expiresAt: string };
    assert.notEqual(after.accessToken, first.accessToken, 'status refreshed');
    assert.equal(row!.accessTokenExpiresAt, after.expiresAt, 'status printed the expiry of the token now stored');
    assert.notEqual(row!.accessTokenExpiresAt, first.expiresAt);
  });

  it('DOCS-AGREE-AUTH: a login file other users can read is reported with its actual mode on both lines, never "mode 0600"', async () => {
    const profile = ['--profile', 'opened'];
    assert.equal((await gantry(['auth', 'login', '--json', '--store', 'file', ...profile])).code, 0);
    const folder = join(configDir, 'auth');
    const file = (await readdir(folder)).find((name) => name.startsWith('opened-'))!;
    await chmod(join(folder, file), 0o644);
    const status = await gantry(['auth', 'status', ...profile]);
    assert.equal(status.code, 1);
    assert.match(status.stdout, /store not readable: .*\(mode 0644\)/);
    assert.match(status.stdout, /tokens kept in: .*opened-.*\.json \(plain text, mode 0644, readable by other users\)/);
    assert.doesNotMatch(status.stdout, /0600/);
    await chmod(join(folder, file), 0o600);
    assert.match((await gantry(['auth', 'status', '--offline', ...profile])).stdout, /tokens kept in: .*\(plain text, mode 0600\)/);
  });

  it("DOCS-AGREE-AUTH: a kv-stored login is reported at the kv engine it is read from now (today's SECRETS_ADDR), with the one it was written to", async () => {
    const first = await startSecretsServer({});
    const second = await startSecretsServer({});
    try {
      const kvAt = (kv: SecretsServer) => env({ SECRETS_ADDR: kv.url, SECRETS_TOKEN: kv.rootToken });
      const login = await gantry(['auth', 'login', '--json', '--store', 'kv', '--profile', 'moved'], kvAt(first));
      assert.equal(login.code, 0, login.stderr);
      const here = await gantry(['auth', 'status', '--offline', '--profile', 'moved'], kvAt(first));
      assert.match(here.stdout, new RegExp(`tokens kept in: kv engine secret/gantry/auth/moved at ${first.url}\\n`));
      const moved = await gantry(['auth', 'status', '--offline', '--profile', 'moved'], kvAt(second));
      assert.match(moved.stdout, /missing from its store/);
      assert.match(
        moved.stdout,
        new RegExp(`tokens kept in: kv engine secret/gantry/auth/moved at ${second.url} \\(the login was written to the kv engine at ${first.url}\\)`),
      );
    } finally {
      await first.stop();
      await second.stop();
    }
  });

  it('DOCS-AGREE-AUTH: logout against an authorization server it cannot reach exits 3, keeps the tokens, and its hint names --forget', async () => {
    const gone = await startOAuthServer({ host: '127.0.0.1', port: 0, interval: 1 });
    const goneClient = gone.registerClient({ name: 'gone' });
    const at = env({}, gone, goneClient);
    assert.equal((await gantry(['auth', 'login', '--json', '--store', 'file', '--profile', 'gone'], at, gone)).code, 0);
    await gone.stop();
    const logout = await gantry(['auth', 'logout', '--profile', 'gone'], at);
    assert.equal(logout.code, 3, logout.stderr);
    assert.match(logout.stderr, /hint: .*`gantry auth logout --forget`.*stay valid at the server until they expire/);
    assert.match((await gantry(['auth', 'status', '--offline', '--profile', 'gone'], at)).stdout, /logged in as dev@gantry\.test/);
    const forget = await gantry(['auth', 'logout', '--forget', '--profile', 'gone'], at);
    assert.equal(forget.code, 0, forget.stderr);
  });
});
