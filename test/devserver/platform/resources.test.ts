// The resources of the embedded platform API: commit statuses (with GitHub's validation), combined status, Link
// pagination, deployments and their statuses, 404s; and its faults.
import assert from 'node:assert/strict';
import { startPlatformServer, type PlatformServer } from '../../../devserver/platform/index.js';
import { call, rate } from './helpers.js';

describe('devserver/platform: resources and faults', function () {
  this.timeout(30_000);
  let server: PlatformServer;
  const token = 'ghp_resources';
  const sha = 'a'.repeat(40);

  beforeEach(async () => {
    server = await startPlatformServer({
      tokens: [{ token, kind: 'personal', login: 'dev' }],
      repositories: [
        { owner: 'gantry', name: 'demo' },
        { owner: 'gantry', name: 'secret', private: true },
        ...Array.from({ length: 45 }, (_, i) => ({ owner: 'many', name: `r${String(i).padStart(2, '0')}` })),
      ],
    });
  });
  afterEach(() => server.stop());

  it('commit statuses: state error|failure|pending|success, description ≤ 140 characters, target_url and context — 422 Validation Failed with errors[] otherwise', async () => {
    const post = (body: unknown) => call(server.url, 'POST', `/repos/gantry/demo/statuses/${sha}`, { token, body });
    const bad = await post({ state: 'done', description: 'x'.repeat(141), target_url: 'ftp://x' });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.message, 'Validation Failed');
    assert.deepEqual(
      bad.body.errors.map((e: { field: string }) => e.field),
      ['state', 'description', 'target_url'],
    );
    assert.equal(bad.body.errors[1].message, 'description is too long (maximum is 140 characters)');
    assert.equal((await post({ description: 'no state' })).body.errors[0].code, 'missing_field');
    assert.equal((await post({ state: 'success', description: 'é'.repeat(140) })).status, 201);
    assert.equal(
      (await call(server.url, 'POST', '/repos/gantry/demo/statuses/not-a-sha', { token, body: { state: 'success' } })).body.message,
      'No commit found for SHA: not-a-sha',
    );
    assert.equal((await call(server.url, 'POST', `/repos/gantry/demo/statuses/${sha}`, { token, body: '[' as unknown })).status, 400);
    for (const state of ['error', 'failure', 'pending', 'success']) {
      const created = await post({ state, context: `ctx/${state}`, target_url: 'https://ci.example/1', description: state });
      assert.equal(created.status, 201);
      assert.deepEqual([created.body.state, created.body.context, created.body.target_url], [state, `ctx/${state}`, 'https://ci.example/1']);
    }
  });

  it('combined status: the latest per context; failure beats pending beats success; statuses newest first', async () => {
    const post = (state: string, context: string) => call(server.url, 'POST', `/repos/gantry/demo/statuses/${sha}`, { token, body: { state, context } });
    const combined = async () => (await call(server.url, 'GET', `/repos/gantry/demo/commits/${sha}/status`, { token })).body;
    assert.deepEqual([(await combined()).state, (await combined()).total_count], ['pending', 0]);
    await post('pending', 'gate');
    await post('success', 'build');
    assert.equal((await combined()).state, 'pending');
    await post('success', 'gate');
    assert.deepEqual([(await combined()).state, (await combined()).total_count], ['success', 2]);
    await post('error', 'lint');
    assert.equal((await combined()).state, 'failure');
    const list = await call(server.url, 'GET', `/repos/gantry/demo/commits/${sha}/statuses`, { token });
    assert.deepEqual(
      list.body.map((s: { context: string; state: string }) => `${s.context}:${s.state}`),
      ['lint:error', 'gate:success', 'build:success', 'gate:pending'],
    );
    const byBranch = await call(server.url, 'GET', '/repos/gantry/demo/commits/main/status', { token });
    assert.equal(byBranch.body.total_count, 0, 'main is another commit');
  });

  it('repositories: 404 for an unknown or (unauthenticated) private one; lists page with Link rel="next"/"last" (30 by default, per_page up to 100)', async () => {
    assert.deepEqual(
      [(await call(server.url, 'GET', '/repos/gantry/nope', { token })).status, (await call(server.url, 'GET', '/repos/gantry/secret')).status],
      [404, 404],
    );
    assert.equal((await call(server.url, 'GET', '/repos/gantry/secret', { token })).status, 200);
    const first = await call(server.url, 'GET', '/orgs/many/repos', { token });
    assert.equal(first.body.length, 30);
    const next = /<([^>]+)>; rel="next"/.exec(String(first.headers.link))![1]!;
    assert.match(String(first.headers.link), /rel="last"/);
    const second = await call(server.url, 'GET', next, { token });
    assert.equal(second.body.length, 15);
    assert.doesNotMatch(String(second.headers.link), /rel="next"/);
    assert.equal((await call(server.url, 'GET', '/orgs/many/repos?per_page=500', { token })).body.length, 45);
  });

  it('deployments: required contexts must be success (409 otherwise), statuses in order, success marks the previous one inactive', async () => {
    await call(server.url, 'POST', '/repos/gantry/demo/statuses/main', { token, body: { state: 'pending', context: 'gantry/gate' } });
    const blocked = await call(server.url, 'POST', '/repos/gantry/demo/deployments', { token, body: { ref: 'main', environment: 'production' } });
    assert.equal(blocked.status, 409);
    assert.equal(blocked.body.errors[0].contexts[0].context, 'gantry/gate');
    assert.equal((await call(server.url, 'POST', '/repos/gantry/demo/deployments', { token, body: {} })).status, 422);
    const first = await call(server.url, 'POST', '/repos/gantry/demo/deployments', { token, body: { ref: 'main', required_contexts: [] } });
    assert.equal(first.status, 201);
    await call(server.url, 'POST', '/repos/gantry/demo/statuses/main', { token, body: { state: 'success', context: 'gantry/gate' } });
    const second = await call(server.url, 'POST', '/repos/gantry/demo/deployments', { token, body: { ref: 'main' } });
    assert.equal(second.status, 201);
    for (const state of ['in_progress', 'success']) {
      assert.equal(
        (
          await call(server.url, 'POST', `/repos/gantry/demo/deployments/${second.body.id}/statuses`, {
            token,
            body: { state, environment_url: 'https://prod.example' },
          })
        ).status,
        201,
      );
    }
    assert.equal((await call(server.url, 'POST', `/repos/gantry/demo/deployments/${second.body.id}/statuses`, { token, body: { state: 'done' } })).status, 422);
    const statuses = await call(server.url, 'GET', `/repos/gantry/demo/deployments/${second.body.id}/statuses`, { token });
    assert.deepEqual(
      statuses.body.map((s: { state: string }) => s.state),
      ['success', 'in_progress'],
    );
    const old = await call(server.url, 'GET', `/repos/gantry/demo/deployments/${first.body.id}/statuses`, { token });
    assert.equal(old.body[0].state, 'inactive');
    assert.equal((await call(server.url, 'GET', '/repos/gantry/demo/deployments?environment=production', { token })).body.length, 2);
  });

  it("faults: a 502 that is not JSON, a reset, a 503 in the platform's shape with retry-after, latency — armed by the admin endpoint; a proxy's fault carries no rate headers and is not counted", async () => {
    const arm = (fault: unknown) => call(server.url, 'POST', '/_gantry/faults', { body: fault });
    await arm({ kind: 'non-json', path: '/repos/*/*', times: 1 });
    const html = await call(server.url, 'GET', '/repos/gantry/demo', { token });
    assert.equal(html.status, 502);
    assert.match(String(html.headers['content-type']), /text\/html/);
    assert.equal(html.body, undefined);
    assert.equal(html.headers['x-ratelimit-limit'], undefined);
    await arm({ kind: 'status', status: 503, retryAfter: 2, times: 1 });
    const unavailable = await call(server.url, 'GET', '/repos/gantry/demo', { token });
    assert.deepEqual(
      [unavailable.status, unavailable.headers['retry-after'], typeof unavailable.body.message, typeof unavailable.body.documentation_url],
      [503, '2', 'string', 'string'],
    );
    await arm({ kind: 'reset', times: 1 });
    await assert.rejects(call(server.url, 'GET', '/repos/gantry/demo', { token }), /ECONNRESET|socket hang up/);
    await arm({ kind: 'latency', ms: 300, times: 1 });
    const started = Date.now();
    const slow = await call(server.url, 'GET', '/repos/gantry/demo', { token });
    assert.ok(Date.now() - started >= 290);
    assert.deepEqual([slow.status, rate(slow).used], [200, 1], 'only the request the API answered was counted');
    assert.deepEqual((await call(server.url, 'GET', '/_gantry/faults')).body.faults, []);
  });
});
