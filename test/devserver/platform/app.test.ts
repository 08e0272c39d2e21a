// App installation tokens from the embedded platform API: a JWT RS256 signed by the app's private key, checked
// against the public key the server was given; the token it issues is an installation identity (RATE-PRI-INSTALLATION-*).
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { startPlatformServer, type PlatformServer } from '../../../devserver/platform/index.js';
import { appJwt, call, rate } from './helpers.js';

describe('devserver/platform: app installation tokens (JWT RS256)', function () {
  this.timeout(30_000);
  const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 });
  let server: PlatformServer;
  const now = () => Math.floor(Date.now() / 1000);
  const jwt = (claims: Record<string, unknown> = {}, key = keys.privateKey) => appJwt(key, { iat: now() - 30, exp: now() + 540, iss: 42, ...claims });

  before(async () => {
    const many = Array.from({ length: 30 }, (_, i) => ({ owner: 'big', name: `repo-${i}` }));
    server = await startPlatformServer({
      repositories: [{ owner: 'gantry', name: 'demo' }, { owner: 'gantry', name: 'site' }, { owner: 'other', name: 'x' }, ...many],
      apps: [
        {
          id: 42,
          publicKey: keys.publicKey.export({ type: 'spki', format: 'pem' }) as string,
          installations: [
            { id: 7, account: 'gantry', repositories: ['gantry/demo'] },
            { id: 8, account: 'big', users: 25 },
            { id: 9, account: 'gantry', enterprise: true },
            { id: 10, account: 'big', users: 500 },
          ],
        },
      ],
    });
  });
  after(() => server.stop());

  it('RATE-PRI-INSTALLATION-MIN RATE-IDENTITY-KINDS: POST /app/installations/{id}/access_tokens with a valid JWT gives a ghs_ token an hour long, which is an installation identity of 5,000 an hour reaching its repositories only', async () => {
    const answer = await call(server.url, 'POST', '/app/installations/7/access_tokens', { token: jwt() });
    assert.equal(answer.status, 201);
    assert.match(answer.body.token, /^ghs_[A-Za-z0-9]{36}$/);
    const expires = Date.parse(answer.body.expires_at);
    assert.ok(Math.abs(expires - Date.now() - 3_600_000) < 5000);
    assert.equal(answer.body.repository_selection, 'selected');
    const installation = answer.body.token as string;
    const demo = await call(server.url, 'GET', '/repos/gantry/demo', { token: installation });
    assert.deepEqual([demo.status, rate(demo).limit], [200, 5000]);
    assert.equal(
      (await call(server.url, 'GET', '/repos/gantry/site', { token: installation })).status,
      404,
      'a repository outside the installation is not found',
    );
    assert.equal((await call(server.url, 'GET', '/installation/repositories', { token: installation })).body.total_count, 1);
    const created = await call(server.url, 'POST', '/repos/gantry/demo/statuses/main', {
      token: installation,
      body: { state: 'success', context: 'gantry/gate' },
    });
    assert.equal(created.status, 201);
    assert.equal(created.body.creator.login, 'app-42[bot]');
  });

  it('RATE-PRI-INSTALLATION-SCALING RATE-PRI-INSTALLATION-ENTERPRISE: +50 per repository and per user beyond 20, capped at 12,500; 15,000 on an enterprise plan', async () => {
    const limitOf = async (id: number) => {
      const issued = await call(server.url, 'POST', `/app/installations/${id}/access_tokens`, { token: jwt() });
      assert.equal(issued.status, 201);
      return rate(await call(server.url, 'GET', '/rate_limit', { token: issued.body.token })).limit;
    };
    assert.equal(await limitOf(8), 5000 + 50 * (30 - 20) + 50 * (25 - 20)); // 30 repositories of big, 25 users
    assert.equal(await limitOf(9), 15000);
    assert.equal(await limitOf(10), 12500);
  });

  it("the JWT is checked: another key, an expired one, one too long, a future iat, garbage, no credentials, an unknown app — 401 with GitHub's messages; an unknown installation 404", async () => {
    const cases: [string, string | undefined, RegExp][] = [
      ['another key', jwt({}, stranger.privateKey), /could not be decoded/],
      ['expired', jwt({ iat: now() - 700, exp: now() - 60 }), /'Expiration time' claim \('exp'\) must be a numeric value representing the future time/],
      ['too long', jwt({ exp: now() + 3600 }), /'Expiration time' claim \('exp'\) is too far in the future/],
      ['iat in the future', jwt({ iat: now() + 300, exp: now() + 500 }), /'Issued at' claim \('iat'\)/],
      ['garbage', 'eyJhbGciOi.nope.nope', /could not be decoded/],
      ['no credentials', undefined, /could not be decoded/],
      ['an unknown app', jwt({ iss: 99 }), /'Issuer' claim/],
      ['a personal token', server.issueToken({ kind: 'personal' }), /could not be decoded/],
    ];
    for (const [name, token, message] of cases) {
      const answer = await call(server.url, 'POST', '/app/installations/7/access_tokens', token ? { token } : {});
      assert.equal(answer.status, 401, name);
      assert.match(answer.body.message, message, name);
      assert.ok(answer.headers['x-ratelimit-limit'], name);
    }
    const unknown = await call(server.url, 'POST', '/app/installations/12345/access_tokens', { token: jwt() });
    assert.equal(unknown.status, 404);
    const asApp = await call(server.url, 'GET', '/app', { token: jwt() });
    assert.deepEqual([asApp.status, asApp.body.id], [200, 42]);
    assert.equal((await call(server.url, 'GET', '/repos/gantry/demo', { token: jwt() })).status, 403, 'a JWT is no installation token');
  });

  it('RATE-REVOKED-TOKEN-401: an expired installation token is refused with Bad credentials', async () => {
    const short = await startPlatformServer({
      installationTokenTtlMs: 200,
      apps: [{ id: 42, publicKey: keys.publicKey, installations: [{ id: 7, account: 'gantry' }] }],
    });
    try {
      const issued = await call(short.url, 'POST', '/app/installations/7/access_tokens', { token: jwt() });
      assert.equal((await call(short.url, 'GET', '/repos/gantry/demo', { token: issued.body.token })).status, 200);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const refused = await call(short.url, 'GET', '/repos/gantry/demo', { token: issued.body.token });
      assert.deepEqual([refused.status, refused.body.message], [401, 'Bad credentials']);
    } finally {
      await short.stop();
    }
  });
});
