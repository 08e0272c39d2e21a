// `gantry hooks serve --security-events`: the platform receiver also takes the authorization server's security events
// (RFC 8935 pushes) and drops the stored gantry auth logins of the account an event names (issue 14, item 8).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { startOAuthServer, type OAuthServer } from '../../devserver/oauth/index.js';
import { deviceLogin, resolveScopes } from '../../lib/auth/index.js';
import { listProfiles, openTokenStore, saveLogin } from '../../lib/auth/store/index.js';
import { exited, spawnGantry, startGantry, stopGantry } from './gantry-process.js';

describe('gantry hooks serve --security-events', function () {
  this.timeout(90_000);
  let server: OAuthServer;
  let client: { id: string; secret: string | null };
  let configDir: string;

  before(async () => {
    server = await startOAuthServer({ host: '127.0.0.1', port: 0, interval: 1 });
    client = server.registerClient({});
    configDir = await mkdtemp(path.join(tmpdir(), 'gantry-hooks-secevents-'));
  });
  after(async () => {
    await server.stop();
    await rm(configDir, { recursive: true, force: true });
  });

  const env = () => ({
    GANTRY_WEBHOOK_SECRET: 'a webhook secret',
    GANTRY_AUTH_URL: server.url,
    GANTRY_OAUTH_CLIENT_ID: client.id,
    GANTRY_CONFIG_DIR: configDir,
  });

  it("DEV-RISC-DELIVERY DEV-RISC-SESSIONS-REVOKED: a verified push to the receiver drops the account's stored login, with a line saying so", async () => {
    const result = await deviceLogin({
      authUrl: server.url,
      clientId: client.id,
      clientSecret: client.secret!,
      scopes: resolveScopes(['openid', 'email']),
      onCode: (code) => setTimeout(() => server.approve(code.userCode), 50).unref(),
    });
    const { store } = await openTokenStore('file', { configDir, insecureStorage: true });
    await saveLogin(
      store,
      { authUrl: server.url, clientId: client.id, profile: 'default', tokens: result.tokens, ...(result.account ? { account: result.account } : {}) },
      { configDir },
    );
    assert.equal((await listProfiles({ configDir })).length, 1);
    const {
      child,
      value: listening,
      stdout,
    } = await startGantry(
      ['hooks', 'serve', '--json', '--port', '0', '--security-events', '/security-events'],
      (out) => {
        const first = out.split('\n')[0];
        return first && out.includes('\n') ? (JSON.parse(first) as { listening: string }).listening : undefined;
      },
      env(),
    );
    try {
      server.addSecurityEventReceiver(client.id, new URL('/security-events', listening).href);
      server.revokeSessions('dev');
      const pushes = await server.securityEvents();
      assert.ok(pushes.length === 1 && pushes[0]!.accepted, JSON.stringify(pushes));
      for (let i = 0; i < 50 && !stdout().includes('security-event'); i++) await delay(100);
      assert.match(stdout(), /security-event sessions-revoked \S+: dropped the stored login of http:\/\/127\.0\.0\.1:\d+ \(profile default\)/);
      assert.deepEqual(await listProfiles({ configDir }), []);
      const forged = await fetch(new URL('/security-events', listening), {
        method: 'POST',
        headers: { 'content-type': 'application/secevent+jwt' },
        body: 'e30.e30.c2ln',
      });
      assert.equal(forged.status, 400);
    } finally {
      await stopGantry(child);
    }
  });

  it('bad input: --security-events without an authorization server, or a path that is --path, exits 2 before listening', async () => {
    for (const [args, extra, message] of [
      [['--security-events', '/security-events'], { GANTRY_AUTH_URL: '' }, /needs GANTRY_AUTH_URL and GANTRY_OAUTH_CLIENT_ID/],
      [['--security-events', '/hooks'], {}, /other than --path/],
      [['--security-events', 'security-events'], {}, /must be a path/],
    ] as const) {
      const child = spawnGantry(['hooks', 'serve', '--port', '0', ...args], { ...env(), ...extra });
      let stderr = '';
      child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
      assert.equal(await exited(child), 2, stderr);
      assert.match(stderr, message);
    }
  });
});
