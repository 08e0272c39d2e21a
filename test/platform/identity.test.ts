// Identities and their expected primary budgets, the endpoint templates the points are counted on, and the client
// secret rule — pure functions, no peer.
import assert from 'node:assert/strict';
import { UsageError } from '../../lib/errors.js';
import { PlatformClient, endpointOf, installationBudget, isCreation, pathTemplate, resolveIdentity, resourceOf } from '../../lib/platform/index.js';

describe('platform identities (RATE-IDENTITY-KINDS, RATE-PRI-*)', () => {
  it("RATE-IDENTITY-KINDS, RATE-PRI-UNAUTHENTICATED, RATE-PRI-USER, RATE-PRI-USER-ENTERPRISE: the kind from the token's form, and its budget", () => {
    const cases: Array<[Parameters<typeof resolveIdentity>[0], string, number]> = [
      [{}, 'unauthenticated', 60],
      [{ token: 'ghp_abc' }, 'personal', 5_000],
      [{ token: 'github_pat_abc' }, 'personal', 5_000],
      [{ token: 'ghu_abc' }, 'user-app', 5_000],
      [{ token: 'gho_abc' }, 'oauth-app-token', 5_000],
      [{ token: 'ghs_abc' }, 'installation', 5_000],
      [{ token: 'opaque-token' }, 'personal', 5_000],
      [{ token: 'ghp_abc', options: { enterprise: true } }, 'personal', 15_000],
      [{ clientId: 'Iv1.abc', clientSecret: 's' }, 'oauth-app-client', 5_000],
      [{ clientId: 'Iv1.abc', clientSecret: 's', options: { enterprise: true } }, 'oauth-app-client', 15_000],
    ];
    for (const [input, kind, budget] of cases) {
      const identity = resolveIdentity(input);
      assert.equal(identity.kind, kind, JSON.stringify(input));
      assert.equal(identity.expectedPerHour, budget, JSON.stringify(input));
      assert.ok(!identity.key.includes('abc'), 'the key is a hash, not the credential');
    }
  });

  it('RATE-PRI-WORKFLOW-TOKEN: a token read from PLATFORM_TOKEN is the workflow token, 1,000 per repository (15,000 enterprise)', () => {
    assert.equal(resolveIdentity({ token: 'ghs_abc', tokenSource: 'PLATFORM_TOKEN' }).kind, 'workflow');
    assert.equal(resolveIdentity({ token: 'ghs_abc', tokenSource: 'PLATFORM_TOKEN' }).expectedPerHour, 1_000);
    assert.equal(resolveIdentity({ token: 'ghs_abc', tokenSource: 'PLATFORM_TOKEN', options: { enterprise: true } }).expectedPerHour, 15_000);
    assert.equal(resolveIdentity({ token: 'ghp_abc', tokenSource: 'PLATFORM_TOKEN' }).kind, 'personal', 'a personal token put there stays personal');
    assert.equal(resolveIdentity({ token: 'ghp_abc', options: { kind: 'workflow' } }).kind, 'workflow', 'configured wins');
  });

  it('RATE-PRI-INSTALLATION-MIN, RATE-PRI-INSTALLATION-SCALING, RATE-PRI-INSTALLATION-ENTERPRISE: 5,000 + 50 per repository and user beyond 20, cap 12,500; 15,000 enterprise', () => {
    assert.equal(installationBudget({}), 5_000);
    assert.equal(installationBudget({ repositories: 20, users: 20 }), 5_000);
    assert.equal(installationBudget({ repositories: 30 }), 5_500);
    assert.equal(installationBudget({ repositories: 30, users: 25 }), 5_750);
    assert.equal(installationBudget({ repositories: 1_000, users: 1_000 }), 12_500);
    assert.equal(installationBudget({ enterprise: true, repositories: 1_000 }), 15_000);
    assert.equal(resolveIdentity({ token: 'ghs_x', options: { repositories: 120 } }).expectedPerHour, 10_000);
    assert.throws(() => resolveIdentity({ options: { kind: 'robot' as never } }), UsageError);
  });

  it('RATE-CLIENT-SECRET-PRIVATE: a client secret is refused unless the process says it is a server (serverSide, or CI)', () => {
    const base = { baseUrl: 'http://127.0.0.1:9', clientId: 'Iv1.abc', clientSecret: 'client-secret-canary', proxy: {} };
    assert.throws(
      () => new PlatformClient({ ...base, env: {} }),
      (e: unknown) => e instanceof UsageError && /RATE-CLIENT-SECRET-PRIVATE/.test(e.message) && !e.message.includes('client-secret-canary'),
    );
    const server = new PlatformClient({ ...base, env: {}, serverSide: true });
    assert.equal(server.identity.kind, 'oauth-app-client');
    server.close();
    const ci = new PlatformClient({ ...base, env: { CI: 'true' } });
    ci.close();
    assert.throws(() => new PlatformClient({ ...base, env: {}, serverSide: true, token: 'ghp_x' }), /either a token or client credentials/);
  });
});

describe('platform endpoints: what the points, creations and resources are counted on (RATE-SEC-POINTS-REST, RATE-SEC-CONTENT-CREATION)', () => {
  it('RATE-SEC-POINTS-REST: one template per endpoint, whatever the owner, repository, number or sha', () => {
    const same = (a: string, b: string) => assert.equal(pathTemplate(a), pathTemplate(b), `${a} ~ ${b}`);
    same('/repos/octo-org/site/issues/1', '/repos/other/repo/issues/2');
    same('/repos/o/r/statuses/0123456789abcdef0123456789abcdef01234567', '/repos/a/b/statuses/feedfacefeedfacefeedfacefeedfacefeedface');
    same('/repos/o/r/commits/main/statuses', '/repos/o/r/commits/heads/feature/x/statuses');
    same('/users/alice', '/users/bob');
    same('/repos/o/r/contents/a/b/c.txt', '/repos/o/r/contents/d.txt');
    same('/repos/{owner}/{repo}/issues', '/repos/o/r/issues');
    assert.notEqual(pathTemplate('/repos/o/r/issues'), pathTemplate('/repos/o/r/pulls'));
    assert.equal(endpointOf('get', '/repos/o/r/issues/7/comments'), 'GET /repos/{}/{}/issues/{}/comments');
    assert.notEqual(endpointOf('GET', '/repos/o/r/issues'), endpointOf('POST', '/repos/o/r/issues'));
    // A template the caller wrote is the endpoint as written: two endpoints under commits/{ref} stay two budgets.
    assert.equal(pathTemplate('/repos/{owner}/{repo}/commits/{ref}/status'), '/repos/{}/{}/commits/{}/status');
    assert.notEqual(endpointOf('GET', '/repos/{owner}/{repo}/commits/{ref}/status'), endpointOf('GET', '/repos/{owner}/{repo}/commits/{ref}/statuses'));
  });

  it('RATE-PRI-STRICTER-ENDPOINTS, RATE-PRI-GRAPHQL-SEPARATE, RATE-SEC-CONTENT-CREATION: resources and creations', () => {
    assert.equal(resourceOf('/search/issues'), 'search');
    assert.equal(resourceOf('/search/code'), 'code_search');
    assert.equal(resourceOf('/graphql'), 'graphql');
    assert.equal(resourceOf('/repos/o/r'), 'core');
    assert.equal(isCreation('POST', '/repos/o/r/issues'), true);
    assert.equal(isCreation('POST', '/repos/o/r/statuses/abc'), true);
    assert.equal(isCreation('GET', '/repos/o/r/issues'), false);
    assert.equal(isCreation('POST', '/app/installations/1/access_tokens'), false);
  });
});
