// `gantry auth` as a user runs it (the built command, its own process) against the embedded authorization server:
// login, status, token into a pipe, whoami, refresh, logout; bad input refused before anything is sent; Ctrl-C; a
// denied login; and no token in anything it prints, even with --verbose.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startOAuthServer, type OAuthServer } from '../../devserver/oauth/index.js';

const bin = fileURLToPath(new URL('../../dist/lib/cli/main.js', import.meta.url));

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

describe('gantry auth (the command)', function () {
  this.timeout(90_000);
  let server: OAuthServer;
  let client: { id: string; secret: string | null };
  let configDir: string;
  const everything: string[] = [];

  before(async () => {
    server = await startOAuthServer({ host: '127.0.0.1', port: 0, interval: 1 });
    client = server.registerClient({ name: 'CLI test' });
    configDir = await mkdtemp(join(tmpdir(), 'gantry-auth-cli-'));
  });
  after(async () => {
    await server.stop();
    await rm(configDir, { recursive: true, force: true });
  });

  function env(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
    const base: NodeJS.ProcessEnv = {
      ...process.env,
      GANTRY_CONFIG_DIR: configDir,
      GANTRY_AUTH_URL: server.url,
      GANTRY_OAUTH_CLIENT_ID: client.id,
      GANTRY_OAUTH_CLIENT_SECRET: client.secret!,
      GANTRY_API_URL: server.url,
    };
    // No keyring and no kv engine here unless a test asks: the tests say where the tokens go.
    delete base.DBUS_SESSION_BUS_ADDRESS;
    delete base.SECRETS_ADDR;
    return { ...base, ...extra };
  }

  /** Runs gantry; `onStderrLine` sees each stderr line as it comes (to approve the code it shows, or to interrupt). */
  function gantry(
    args: string[],
    options: { env?: NodeJS.ProcessEnv; onStderrLine?: (line: string, child: ReturnType<typeof spawn>) => void; shell?: string } = {},
  ): Promise<Run> {
    return new Promise((resolve, reject) => {
      const child = options.shell
        ? spawn('bash', ['--norc', '-c', options.shell], { env: options.env ?? env() })
        : spawn(process.execPath, [bin, ...args], { env: options.env ?? env() });
      let stdout = '';
      let stderr = '';
      let pending = '';
      child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk));
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk;
        pending += chunk;
        let newline: number;
        while ((newline = pending.indexOf('\n')) >= 0) {
          options.onStderrLine?.(pending.slice(0, newline), child);
          pending = pending.slice(newline + 1);
        }
      });
      child.on('error', reject);
      child.on('close', (code, signal) => {
        everything.push(stdout, stderr);
        resolve({ code, signal, stdout, stderr });
      });
    });
  }

  const approveShown = (decision: 'allow' | 'deny') => (line: string) => {
    if (!line.startsWith('{')) return;
    const { user_code: code } = JSON.parse(line) as { user_code: string };
    setTimeout(() => (decision === 'allow' ? server.approve(code) : server.deny(code)), 300).unref();
  };

  it('DEV-FLOW-DISPLAY DEV-FLOW-REQUEST-CODES: login --json hands the code on as one JSON line on stderr, keeps the tokens and says where', async () => {
    const run = await gantry(['auth', 'login', '--json', '--store', 'file', '--scope', 'openid,email', '--scope', 'video.readonly'], {
      onStderrLine: approveShown('allow'),
    });
    assert.equal(run.code, 0, run.stderr);
    const shown = JSON.parse(run.stderr.split('\n').find((line) => line.startsWith('{'))!) as Record<string, unknown>;
    assert.equal(shown.verification_url, `${server.url}/device`);
    assert.match(String(shown.user_code), /^[A-Z]{4}-[A-Z]{4}$/);
    const result = JSON.parse(run.stdout) as { account: { email: string }; store: { kind: string; location: string }; scope: string };
    assert.equal(result.account.email, 'dev@gantry.test');
    assert.equal(result.store.kind, 'file');
    assert.match(run.stderr, /plain text/, 'a plain-text file is never chosen silently');
    assert.match(result.scope, /video\.readonly/);
  });

  it('DEV-AUTH-REFRESH-REUSE DEV-AUTH-ACCESS-TOKEN-TRANSPORT: status, token into a pipe, whoami and refresh use the stored login', async () => {
    const status = await gantry(['auth', 'status']);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /logged in as dev@gantry\.test/);
    assert.match(status.stdout, /tokens kept in: .*\.json/);
    const piped = await gantry([], { shell: `node ${JSON.stringify(bin)} auth token | head -1` });
    assert.equal(piped.code, 0);
    assert.match(piped.stdout.trim(), /^ya29\./);
    const whoami = await gantry(['auth', 'whoami']);
    assert.equal(whoami.code, 0, whoami.stderr);
    assert.match(whoami.stdout, /^dev@gantry\.test on /);
    assert.match(whoami.stdout, /channel \S+: Gantry Dev's channel/);
    const refresh = await gantry(['auth', 'refresh', '--json']);
    assert.equal(refresh.code, 0, refresh.stderr);
    const after = await gantry([], { shell: `node ${JSON.stringify(bin)} auth token` });
    assert.notEqual(after.stdout.trim(), piped.stdout.trim(), 'the refreshed token is the one handed out now');
  });

  it('DEV-TL-REVOKE: logout revokes, deletes, and status then exits 1', async () => {
    const logout = await gantry(['auth', 'logout']);
    assert.equal(logout.code, 0, logout.stderr);
    assert.match(logout.stdout, /revoked at the server and deleted/);
    const status = await gantry(['auth', 'status']);
    assert.equal(status.code, 1);
    assert.match(status.stdout, /Not logged in/);
    const token = await gantry(['auth', 'token']);
    assert.equal(token.code, 1);
    assert.match(token.stderr, /not logged in.*\nhint: run `gantry auth login`/s);
  });

  it('DEV-SCOPE-DEVICE-ALLOWED: bad input exits 2 before anything is sent', async () => {
    const before = server.requestLog().length;
    const cases: Array<[string[], RegExp, NodeJS.ProcessEnv?]> = [
      [['auth', 'login', '--store', 'file', '--scope', 'video.upload'], /does not permit the scope "video\.upload"/],
      [['auth', 'login', '--store', 'somewhere'], /store/i],
      [['auth', 'login', '--store', 'file', '--auth-url', 'http://auth.example.com'], /must be https/],
      [['auth', 'login', '--store', 'file', '--profile', '../etc'], /--profile/],
      [['auth', 'login', '--store', 'file', '--client-secret-file', '/nonexistent/secret'], /--client-secret-file/],
      [['auth', 'login'], /no safe place for the tokens/],
      [['auth', 'login', '--store', 'file'], /no authorization server/, env({ GANTRY_AUTH_URL: '' })],
    ];
    for (const [args, message, environment] of cases) {
      const run = await gantry(args, environment ? { env: environment } : {});
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, message, args.join(' '));
    }
    assert.equal(server.requestLog().length, before, 'nothing reached the server');
  });

  it('DEV-CLIENT-CREDENTIALS: the client id and secret come from the Pulumi configuration a program passes on (PULUMI_CONFIG) when no flag or variable gives them', async () => {
    const pulumiEnv = env({
      GANTRY_OAUTH_CLIENT_ID: '',
      GANTRY_OAUTH_CLIENT_SECRET: '',
      PULUMI_CONFIG: JSON.stringify({ 'gantry:oauthClientId': client.id, 'gantry:oauthClientSecret': client.secret }),
    });
    const run = await gantry(['auth', 'login', '--json', '--store', 'file', '--profile', 'pulumi'], { env: pulumiEnv, onStderrLine: approveShown('allow') });
    assert.equal(run.code, 0, run.stderr);
    assert.equal((JSON.parse(run.stdout) as { clientId: string }).clientId, client.id);
    const noClient = await gantry(['auth', 'login', '--store', 'file'], { env: env({ GANTRY_OAUTH_CLIENT_ID: '' }) });
    assert.equal(noClient.code, 2);
    assert.match(noClient.stderr, /no client id/);
  });

  it('DEV-TL-REVOKE DEV-TL-USER-REVOKE DEV-TL-REFRESH: a second login revokes the one it replaces; whoami refreshes once after a 401; status asks the server and exits 1 once access was revoked', async () => {
    const profile = ['--profile', 'twice'];
    const first = await gantry(['auth', 'login', '--json', '--store', 'file', ...profile], { onStderrLine: approveShown('allow') });
    assert.equal(first.code, 0, first.stderr);
    const firstToken = (await gantry(['auth', 'token', ...profile])).stdout.trim();
    const second = await gantry(['auth', 'login', '--json', '--store', 'file', ...profile], { onStderrLine: approveShown('allow') });
    assert.equal(second.code, 0, second.stderr);
    assert.match(
      (JSON.parse(second.stdout) as { replaced?: string }).replaced ?? '',
      /Replaced the earlier login of this profile \(dev@gantry\.test\): revoked at the server/,
    );
    const old = await fetch(`${server.url}/video/v3/channels?part=id&mine=true`, { headers: { authorization: `Bearer ${firstToken}` } });
    assert.equal(old.status, 401, 'the replaced login no longer works');
    // The server ends the access token early: whoami refreshes once and answers.
    const current = (await gantry(['auth', 'token', ...profile])).stdout.trim();
    await fetch(`${server.url}/_gantry/tokens/expire`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: current }),
    });
    const whoami = await gantry(['auth', 'whoami', ...profile]);
    assert.equal(whoami.code, 0, whoami.stderr);
    assert.notEqual((await gantry(['auth', 'token', ...profile])).stdout.trim(), current);
    const online = await gantry(['auth', 'status', ...profile]);
    assert.equal(online.code, 0, online.stdout);
    assert.match(online.stdout, /at the server: valid at the server/);
    server.userRevokesAccess('dev', client.id);
    const revoked = await gantry(['auth', 'status', ...profile]);
    assert.equal(revoked.code, 1, revoked.stdout);
    assert.match(revoked.stdout, /revoked or expired at the server: run `gantry auth login`/);
    const offline = await gantry(['auth', 'status', '--offline', ...profile]);
    assert.equal(offline.code, 0, 'offline, the stored login still counts');
  });

  it('DEV-ST-DENIED: a denied login exits 1 with its reason, and keeps nothing', async () => {
    const run = await gantry(['auth', 'login', '--json', '--store', 'file', '--profile', 'denied'], { onStderrLine: approveShown('deny') });
    assert.equal(run.code, 1);
    assert.match(run.stderr, /access was denied/);
    assert.equal(run.stdout, '');
    const status = await gantry(['auth', 'status', '--profile', 'denied']);
    assert.equal(status.code, 1);
  });

  it('DEV-LIM-POLL-INTERVAL: Ctrl-C while waiting stops polling at once (exit 130)', async () => {
    let interruptedAt = 0;
    const run = await gantry(['auth', 'login', '--json', '--store', 'file', '--profile', 'interrupted'], {
      onStderrLine: (line, child) => {
        if (!line.startsWith('{')) return;
        setTimeout(() => {
          interruptedAt = Date.now();
          child.kill('SIGINT');
        }, 1_500).unref();
      },
    });
    assert.equal(run.code, 130, run.stderr);
    assert.match(run.stderr, /Login cancelled/);
    assert.ok(Date.now() - interruptedAt < 1_000, 'it stopped at once');
  });

  it('DEV-CLIENT-NO-SECRETS: no token, refresh token or client secret in anything the command printed, even with --verbose', async () => {
    const profile = ['--profile', 'verbose'];
    const runs = [await gantry(['auth', 'login', '--json', '--verbose', '--store', 'file', ...profile], { onStderrLine: approveShown('allow') })];
    assert.equal(runs[0]!.code, 0, runs[0]!.stderr);
    runs.push(await gantry(['auth', 'refresh', '--verbose', ...profile]));
    runs.push(await gantry(['auth', 'status', '--json', '--verbose', ...profile]));
    const failing = await gantry(['auth', 'whoami', '--verbose', '--token-in-query', '--api-url', `${server.url}/missing`, ...profile]);
    assert.equal(failing.code, 1, failing.stderr);
    runs.push(failing);
    // The values to look for: the token `auth token` hands out (its job), and the refresh token in the store's file.
    const token = (await gantry(['auth', 'token', ...profile])).stdout.trim();
    const { readdir, readFile } = await import('node:fs/promises');
    const files = (await readdir(join(configDir, 'auth'))).filter((name) => name.startsWith('verbose-'));
    const stored = JSON.parse(await readFile(join(configDir, 'auth', files[0]!), 'utf8')) as { tokens: { refreshToken: string } };
    assert.ok(
      token.length > 10 && stored.tokens.refreshToken.length > 10,
      `token ${token.length} chars; stored: ${Object.keys(stored.tokens ?? stored).join(',')}`,
    );
    const printed = [...everything, ...runs.flatMap((run) => [run.stdout, run.stderr])].filter((text) => text.trim() !== token).join('\n');
    assert.match(failing.stderr, /access_token=\[REDACTED\]|answered 404/, 'the failing call is reported');
    for (const secret of [token, stored.tokens.refreshToken, client.secret!]) assert.ok(!printed.includes(secret), 'a credential was printed');
  });
});
