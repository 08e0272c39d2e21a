// PlatformApp against the embedded platform API: the app's JWT (verified by the server against the app's public key),
// installation tokens fetched once and kept until a minute before they expire, a client per installation with the
// installation's budget, a revoked installation token replaced once, and the private key and tokens never in a
// message or a log line.
import assert from 'node:assert/strict';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { inspect } from 'node:util';
import { startPlatformServer, type PlatformServer } from '../../devserver/platform/index.js';
import { ExitCode, UsageError } from '../../lib/errors.js';
import { createLogger, silentLogger } from '../../lib/log.js';
import { MemoryBudgetStore, PlatformApp, PlatformCredentialsError, type PlatformAppOptions } from '../../lib/platform/index.js';

const APP_ID = 42;
const INSTALLATION = 7;

function keyPair(type: 'rsa' | 'ec' = 'rsa'): { publicKey: KeyObject; privatePem: string } {
  const { publicKey, privateKey } = type === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { publicKey, privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

describe('PlatformApp: app JWTs and installation tokens against the embedded platform API', function () {
  this.timeout(30_000);
  const key = keyPair();
  let server: PlatformServer | undefined;
  let lines: string[] = [];
  const apps: PlatformApp[] = [];
  const start = async (options: { installationTokenTtlMs?: number } = {}) => {
    lines = [];
    server = await startPlatformServer({
      apps: [
        {
          id: APP_ID,
          publicKey: key.publicKey,
          installations: [
            { id: INSTALLATION, account: 'gantry' },
            { id: 8, account: 'other' },
          ],
        },
      ],
      log: (line) => lines.push(line),
      ...options,
    });
    return server;
  };
  const app = (options: PlatformAppOptions = {}) => {
    const made = new PlatformApp({
      baseUrl: server!.url,
      appId: APP_ID,
      privateKey: key.privatePem,
      env: {},
      store: new MemoryBudgetStore(),
      logger: silentLogger,
      proxy: {},
      ...options,
    });
    apps.push(made);
    return made;
  };
  const tokenRequests = (): number => lines.filter((line) => /POST \/app\/installations\/\d+\/access_tokens/.test(line)).length;
  afterEach(async () => {
    for (const a of apps.splice(0)) a.close();
    await server?.stop();
    server = undefined;
  });

  it('RATE-PRI-INSTALLATION-MIN: the app signs a JWT the server accepts (RS256, iss the app id, iat 60 s back, exp within 10 min) and lists its installations', async () => {
    await start();
    const platform = app();
    const jwt = platform.jwt();
    const [header, claims] = jwt
      .split('.')
      .slice(0, 2)
      .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()) as Record<string, unknown>);
    assert.deepEqual(header, { alg: 'RS256', typ: 'JWT' });
    const now = Math.floor(Date.now() / 1000);
    assert.equal(claims!.iss, String(APP_ID));
    assert.ok(Math.abs((claims!.iat as number) - (now - 60)) <= 2, 'iat is backdated a minute for clock drift');
    assert.ok((claims!.exp as number) - (claims!.iat as number) <= 600, 'the platform takes at most 10 minutes');
    assert.equal(platform.jwt(), jwt, 'reused while it has minutes left');
    assert.deepEqual(await platform.installations(), [
      { id: INSTALLATION, account: 'gantry' },
      { id: 8, account: 'other' },
    ]);
    assert.equal(platform.appClient.identity.kind, 'app');
  });

  it('RATE-PRI-INSTALLATION-MIN, RATE-HDR-LIMIT: a client for an installation fetches one token for 20 requests at once and is budgeted as the installation (5,000 an hour)', async () => {
    await start();
    const client = app().clientFor(INSTALLATION);
    assert.equal(client.identity.kind, 'installation');
    assert.equal(client.identity.expectedPerHour, 5000);
    const answers = await Promise.all(Array.from({ length: 20 }, () => client.request('GET', '/installation/repositories')));
    for (const answer of answers) {
      assert.equal(answer.status, 200);
      assert.equal(answer.headers['x-ratelimit-limit'], '5000');
    }
    assert.equal(tokenRequests(), 1, 'one token request however many ask at once');
    assert.equal(app().clientFor(INSTALLATION) === client, false, 'another app object has its own cache');
  });

  it('RATE-PRI-INSTALLATION-SCALING: the same app gives the same client for an installation; the identity options set its expected budget', async () => {
    await start();
    const platform = app();
    const first = platform.clientFor(INSTALLATION, { repositories: 30 });
    assert.equal(platform.clientFor(String(INSTALLATION)), first, 'one client, one queue per installation');
    assert.equal(first.identity.expectedPerHour, 5000 + 50 * 10);
    assert.notEqual(platform.clientFor(8).identity.key, first.identity.key, 'each installation has its own budget');
  });

  it('RATE-PRI-INSTALLATION-MIN: the token is kept until a minute before it expires, then replaced', async () => {
    // The server's tokens live 62 s (expires_at in whole seconds): kept at first, replaced once under a minute is left.
    await start({ installationTokenTtlMs: 62_000 });
    const platform = app();
    const first = await platform.installationToken(INSTALLATION);
    assert.match(first.token, /^ghs_/);
    assert.equal((await platform.installationToken(INSTALLATION)).token, first.token, 'more than a minute left: kept');
    await delay(2_500);
    const second = await platform.installationToken(INSTALLATION);
    assert.notEqual(second.token, first.token, 'under a minute left: replaced');
    assert.equal(tokenRequests(), 2);
    assert.ok(second.expiresAt.getTime() > Date.now() + 58_000);
  });

  it('RATE-REVOKED-TOKEN-401: a revoked installation token is replaced once and the request goes through; the old token is never sent again', async () => {
    const s = await start();
    const client = app().clientFor(INSTALLATION);
    assert.equal((await client.request('GET', '/installation/repositories')).status, 200);
    const revoked = (await app().installationToken(INSTALLATION)).token; // another token, to check the client's own is the one revoked
    assert.ok(revoked);
    const own = await (client as unknown as { auth: { token(): Promise<string> } }).auth.token();
    assert.ok(s.revokeToken(own));
    const answer = await client.request('GET', '/installation/repositories');
    assert.equal(answer.status, 200);
    assert.equal(tokenRequests(), 3, "the first token, the other app's, and one replacement");
  });

  it('RATE-REVOKED-TOKEN-401: a JWT signed with a key the platform does not know is a PlatformCredentialsError (exit 1) naming the app id and the key, sent twice at most, with neither key nor JWT in it', async () => {
    await start();
    const stranger = keyPair();
    const platform = app({ privateKey: stranger.privatePem });
    await assert.rejects(platform.installationToken(INSTALLATION), (error: unknown) => {
      assert.ok(error instanceof PlatformCredentialsError, String(error));
      assert.equal(error.exitCode, ExitCode.checkFailed);
      const text = `${error.message} ${error.hint ?? ''}`;
      assert.match(text, /app id \(42\)/);
      assert.match(text, /private key/);
      assert.ok(!text.includes(platform.jwt()) && !text.includes(stranger.privatePem.split('\n')[1]!), 'no key or JWT in the message');
      return true;
    });
    assert.ok(tokenRequests() <= 2);
  });

  it("RATE-PRI-INSTALLATION-MIN: an installation of another app, or none, is a 404 for the token and for the client's requests", async () => {
    await start();
    await assert.rejects(app().installationToken(999), (error: unknown) => (error as { status?: number }).status === 404);
    await assert.rejects(app().clientFor(999).request('GET', '/installation/repositories'), (error: unknown) => (error as { status?: number }).status === 404);
  });

  it('bad input: no app id, a non-numeric id, no key, a key that is not PEM (never quoted), an EC key, a key file that is a folder — each a UsageError before anything is sent', async () => {
    await start();
    const folder = await mkdtemp(path.join(tmpdir(), 'gantry-app-'));
    try {
      const notPem = path.join(folder, 'key.pem');
      await writeFile(notPem, 'hunter2-not-a-key\n');
      const cases: Array<[PlatformAppOptions, RegExp]> = [
        [{ appId: undefined }, /no app id.*GANTRY_APP_ID/],
        [{ appId: 'abc' }, /appId must be a whole number/],
        [{ appId: 0 }, /appId must be a whole number/],
        [{ privateKey: undefined }, /no private key.*GANTRY_APP_PRIVATE_KEY_FILE/],
        [{ privateKey: undefined, privateKeyFile: notPem }, /is not a PEM private key/],
        [{ privateKey: 'hunter2-not-a-key' }, /is not a PEM private key/],
        [{ privateKey: keyPair('ec').privatePem }, /is ec; .*RSA \(RS256\)/],
        [{ privateKey: undefined, privateKeyFile: folder }, /is a folder/],
      ];
      for (const [options, expected] of cases) {
        assert.throws(
          () => new PlatformApp({ baseUrl: server!.url, appId: APP_ID, privateKey: key.privatePem, env: {}, logger: silentLogger, ...options }),
          (error: unknown) => {
            assert.ok(error instanceof UsageError, `${JSON.stringify(Object.keys(options))}: ${String(error)}`);
            assert.match(error.message, expected);
            assert.ok(!error.message.includes('hunter2'), 'the key material is never quoted');
            return true;
          },
        );
      }
      assert.throws(() => app().clientFor('7; DROP'), /installationId must be a whole number/);
      assert.deepEqual(
        lines.filter((line) => !/listening/.test(line)),
        [],
        'nothing was sent',
      );
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('GANTRY_APP_ID and GANTRY_APP_PRIVATE_KEY_FILE (as gantry dev prints them) configure the app; debug logs, inspect and JSON.stringify of the app carry neither the key nor a JWT or token', async () => {
    await start();
    const folder = await mkdtemp(path.join(tmpdir(), 'gantry-app-'));
    const logged: string[] = [];
    try {
      const file = path.join(folder, 'app.pem');
      await writeFile(file, key.privatePem, { mode: 0o600 });
      const logger = createLogger({ level: 'debug', write: (line: string) => logged.push(line) });
      const platform = new PlatformApp({
        baseUrl: server!.url,
        env: { GANTRY_APP_ID: String(APP_ID), GANTRY_APP_PRIVATE_KEY_FILE: file },
        logger,
        proxy: {},
        store: new MemoryBudgetStore(),
      });
      apps.push(platform);
      const token = (await platform.installationToken(INSTALLATION)).token;
      await platform.clientFor(INSTALLATION).request('GET', '/installation/repositories');
      const shown = `${inspect(platform, { depth: 10 })} ${JSON.stringify(platform)}`;
      for (const secret of [token, platform.jwt(), key.privatePem.split('\n')[1]!])
        assert.ok(!shown.includes(secret), 'logging the app shows no key, JWT or token');
      const all = logged.join('\n');
      assert.match(all, /installation 7/);
      for (const secret of [token, platform.jwt(), key.privatePem.split('\n')[1]!]) assert.ok(!all.includes(secret), 'no secret in the log');
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
