// Custom deployment protection rules in the embedded platform: environments and rules through GitHub's REST API
// renamed, a deployment to a protected environment waits and its app gets `deployment_protection_rule`; the app
// answers at deployment_callback_url with an installation token — status reports (at most 10), comments (at most 1,024
// characters), one decision — and the deployment succeeds or fails, each status a `deployment_status` delivery.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MAX_COMMENT_CHARACTERS, MAX_STATUS_REPORTS, startDevPlatform, startPlatformServer, type PlatformServer } from '../../../devserver/platform/index.js';
import { appJwt, call } from './helpers.js';
import { GUID, signatureMatches, startReceiver, type Received, type Receiver } from './receiver.js';

const SECRET = 'protection secret';
const TOKEN = 'ghp_protectionprotectionprotectionpro';

describe('devserver/platform: custom deployment protection rules (HOOK-EV-DEPLOYMENT-PROTECTION-RULE)', function () {
  this.timeout(30_000);
  const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
  let server: PlatformServer;
  let receiver: Receiver;
  const now = () => Math.floor(Date.now() / 1000);
  const jwt = (iss: number, key = keys.privateKey) => appJwt(key, { iat: now() - 30, exp: now() + 540, iss });
  const installationToken = async (app: number, installation: number, key = keys.privateKey): Promise<string> => {
    const issued = await call(server.url, 'POST', `/app/installations/${installation}/access_tokens`, { token: jwt(app, key) });
    assert.equal(issued.status, 201, issued.text);
    return issued.body.token as string;
  };
  const event = (name: string, deploymentId?: number) => (r: Received) =>
    r.path === '/hooks/app42' && r.header('x-platform-event') === name && (deploymentId === undefined || r.json().deployment?.id === deploymentId);
  /** Creates a deployment to `environment` and returns it with the deployment_protection_rule delivery it caused. */
  const deploy = async (environment: string) => {
    const created = await call(server.url, 'POST', '/repos/gantry/demo/deployments', {
      token: TOKEN,
      body: { ref: 'main', environment, required_contexts: [] },
    });
    assert.equal(created.status, 201, created.text);
    const delivery = await receiver.next(event('deployment_protection_rule', created.body.id));
    return { deployment: created.body, delivery, payload: delivery.json() };
  };
  const callback = (url: string, token: string | undefined, body: Record<string, unknown>) =>
    call(server.url, 'POST', new URL(url).pathname, { ...(token ? { token } : {}), body });
  const latestStatus = async (id: number) => (await call(server.url, 'GET', `/repos/gantry/demo/deployments/${id}/statuses`, { token: TOKEN })).body[0];

  before(async () => {
    receiver = await startReceiver();
    server = await startPlatformServer({
      repositories: [
        { owner: 'gantry', name: 'demo' },
        { owner: 'gantry', name: 'site' },
      ],
      tokens: [{ kind: 'personal', login: 'dev', token: TOKEN }],
      apps: [
        { id: 42, publicKey: keys.publicKey, installations: [{ id: 7, account: 'gantry' }], webhook: { url: `${receiver.url}/app42`, secret: SECRET } },
        {
          id: 43,
          publicKey: other.publicKey,
          installations: [{ id: 8, account: 'gantry' }],
          webhook: { url: `${receiver.url}/app43`, secret: 'other-app-secret-2c9d' },
        },
        { id: 44, publicKey: other.publicKey, installations: [{ id: 9, account: 'elsewhere' }] },
      ],
      environments: [{ repository: 'gantry/demo', name: 'staging', protectionRules: [{ appId: 42 }] }],
    });
  });
  after(async () => {
    await server.stop();
    await receiver.close();
  });

  it("PUT …/environments/{name} and POST …/deployment_protection_rules {integration_id} protect an environment as GitHub's API does; rules list, get and delete; an app not installed on the repository or named twice is 422; a workflow token 403", async () => {
    const put = await call(server.url, 'PUT', '/repos/gantry/demo/environments/production', { token: TOKEN, body: {} });
    assert.equal(put.status, 200);
    assert.equal(put.body.name, 'production');
    const rule = await call(server.url, 'POST', '/repos/gantry/demo/environments/production/deployment_protection_rules', {
      token: TOKEN,
      body: { integration_id: 42 },
    });
    assert.equal(rule.status, 201, rule.text);
    assert.deepEqual([rule.body.enabled, rule.body.app.id, rule.body.app.slug], [true, 42, 'app-42']);
    const listed = await call(server.url, 'GET', '/repos/gantry/demo/environments/production/deployment_protection_rules', { token: TOKEN });
    assert.deepEqual([listed.body.total_count, listed.body.custom_deployment_protection_rules[0].id], [1, rule.body.id]);
    assert.equal(
      (await call(server.url, 'GET', `/repos/gantry/demo/environments/production/deployment_protection_rules/${rule.body.id}`, { token: TOKEN })).body.app.id,
      42,
    );
    const envs = await call(server.url, 'GET', '/repos/gantry/demo/environments', { token: TOKEN });
    assert.deepEqual(envs.body.environments.map((e: { name: string }) => e.name).sort(), ['production', 'staging'], 'staging came from the options');
    const apps = await call(server.url, 'GET', '/repos/gantry/demo/environments/production/deployment_protection_rules/apps', { token: TOKEN });
    assert.deepEqual(
      apps.body.available_custom_deployment_protection_rule_integrations.map((a: { id: number }) => a.id),
      [42, 43],
    );
    const twice = await call(server.url, 'POST', '/repos/gantry/demo/environments/production/deployment_protection_rules', {
      token: TOKEN,
      body: { integration_id: 42 },
    });
    assert.equal(twice.status, 422);
    const absent = await call(server.url, 'POST', '/repos/gantry/demo/environments/production/deployment_protection_rules', {
      token: TOKEN,
      body: { integration_id: 44 },
    });
    assert.equal(absent.status, 422);
    assert.match(absent.body.errors[0].message, /not installed on gantry\/demo/);
    assert.equal(
      (await call(server.url, 'POST', '/repos/gantry/demo/environments/production/deployment_protection_rules', { token: TOKEN, body: {} })).status,
      422,
    );
    assert.equal(
      (await call(server.url, 'POST', '/repos/gantry/demo/environments/nowhere/deployment_protection_rules', { token: TOKEN, body: { integration_id: 42 } }))
        .status,
      404,
    );
    const workflow = server.issueToken({ kind: 'workflow', repository: 'gantry/demo' });
    assert.equal((await call(server.url, 'PUT', '/repos/gantry/demo/environments/x', { token: workflow, body: {} })).status, 403);
    // A rule that is added and removed again leaves the environment unprotected.
    await call(server.url, 'PUT', '/repos/gantry/demo/environments/temporary', { token: TOKEN, body: {} });
    const temporary = await call(server.url, 'POST', '/repos/gantry/demo/environments/temporary/deployment_protection_rules', {
      token: TOKEN,
      body: { integration_id: 43 },
    });
    assert.equal(
      (await call(server.url, 'DELETE', `/repos/gantry/demo/environments/temporary/deployment_protection_rules/${temporary.body.id}`, { token: TOKEN })).status,
      204,
    );
    const plain = await call(server.url, 'POST', '/repos/gantry/demo/deployments', {
      token: TOKEN,
      body: { ref: 'main', environment: 'temporary', required_contexts: [] },
    });
    assert.equal((await call(server.url, 'GET', `/_gantry/deployments/${plain.body.id}`)).status, 404);
    assert.equal(
      (await call(server.url, 'GET', `/repos/gantry/demo/deployments/${plain.body.id}/statuses`, { token: TOKEN })).body.length,
      0,
      'an unprotected deployment does not wait',
    );
  });

  it('HOOK-EV-DEPLOYMENT-PROTECTION-RULE HOOK-WEBHOOK-TYPES: a deployment to a protected environment waits and its app gets deployment_protection_rule (action requested, environment, event, sha, ref, deployment, deployment_callback_url, installation, repository, sender), signed, as target integration', async () => {
    const { deployment, delivery, payload } = await deploy('production');
    assert.equal(delivery.header('x-platform-hook-installation-target-type'), 'integration');
    assert.equal(delivery.header('x-platform-hook-installation-target-id'), '42');
    assert.match(delivery.header('x-platform-delivery')!, GUID);
    assert.ok(signatureMatches(delivery.header('x-hub-signature-256'), 'sha256', SECRET, delivery.body));
    assert.ok(signatureMatches(delivery.header('x-hub-signature'), 'sha1', SECRET, delivery.body));
    assert.equal(payload.action, 'requested');
    assert.equal(payload.environment, 'production');
    assert.equal(typeof payload.event, 'string');
    assert.equal(payload.sha, deployment.sha);
    assert.equal(payload.ref, 'main');
    assert.equal(payload.deployment.id, deployment.id);
    assert.deepEqual(payload.pull_requests, []);
    assert.match(payload.deployment_callback_url, new RegExp(`^${server.url}/repos/gantry/demo/actions/runs/\\d+/deployment_protection_rule$`));
    assert.equal(payload.installation.id, 7);
    assert.equal(payload.repository.full_name, 'gantry/demo');
    assert.equal(payload.sender.login, 'dev');
    assert.equal((await latestStatus(deployment.id)).state, 'waiting');
    const admin = await call(server.url, 'GET', `/_gantry/deployments/${deployment.id}`);
    assert.equal(admin.status, 200);
    assert.deepEqual(
      [admin.body.state, admin.body.decision, admin.body.reports, admin.body.rules[0].delivery_guid],
      ['waiting', null, [], delivery.header('x-platform-delivery')],
    );
    // App 43 has no rule here: it gets the deployment event, never a protection request.
    await server.webhooks.idle();
    assert.ok(!receiver.received.some((r) => r.path === '/hooks/app43' && r.header('x-platform-event') === 'deployment_protection_rule'));
    assert.ok(
      receiver.received.some((r) => r.path === '/hooks/app43' && r.header('x-platform-event') === 'deployment' && r.json().deployment.id === deployment.id),
    );
  });

  it("approved with an installation token of the rule's app: 204, the deployment proceeds — a success status, sent as a deployment_status delivery; a second decision is 422", async () => {
    const { deployment, payload } = await deploy('production');
    const token = await installationToken(42, 7);
    const approved = await callback(payload.deployment_callback_url, token, {
      environment_name: 'production',
      state: 'approved',
      comment: 'All gates passed.',
    });
    assert.equal(approved.status, 204, approved.text);
    const status = await latestStatus(deployment.id);
    assert.equal(status.state, 'success');
    assert.match(status.description, /All gates passed\./);
    const sent = await receiver.next((r) => event('deployment_status', deployment.id)(r) && r.json().deployment_status.state === 'success');
    assert.equal(sent.json().installation.id, 7);
    const again = await callback(payload.deployment_callback_url, token, { environment_name: 'production', state: 'rejected', comment: 'changed my mind' });
    assert.equal(again.status, 422);
    assert.match(again.body.errors[0].message, /already been approved/);
    assert.equal(
      (await callback(payload.deployment_callback_url, token, { environment_name: 'production', comment: 'late report' })).status,
      422,
      'no status report after the decision',
    );
    const admin = (await call(server.url, 'GET', `/_gantry/deployments/${deployment.id}`)).body;
    assert.equal(admin.state, 'approved');
    assert.deepEqual([admin.decision.state, admin.decision.comment, admin.decision.app_id], ['approved', 'All gates passed.', 42]);
    assert.deepEqual(
      admin.statuses.map((s: { state: string }) => s.state),
      ['waiting', 'success'],
    );
  });

  it('rejected: the deployment fails (a failure status, sent as deployment_status); /_gantry/protection lists it with its decision', async () => {
    const { deployment, payload } = await deploy('staging');
    const token = await installationToken(42, 7);
    const comment = '| check | value |\n|---|---|\n| performance | 0.42 < 0.9 |';
    assert.equal((await callback(payload.deployment_callback_url, token, { environment_name: 'staging', state: 'rejected', comment })).status, 204);
    assert.equal((await latestStatus(deployment.id)).state, 'failure');
    const sent = await receiver.next((r) => event('deployment_status', deployment.id)(r) && r.json().deployment_status.state === 'failure');
    assert.equal(sent.json().deployment.id, deployment.id);
    const all = (await call(server.url, 'GET', '/_gantry/protection')).body.deployments;
    const mine = all.find((d: { deployment_id: number }) => d.deployment_id === deployment.id);
    assert.deepEqual([mine.state, mine.environment, mine.decision.state, mine.decision.comment], ['rejected', 'staging', 'rejected', comment]);
    assert.deepEqual(server.webhooks.protection().find((d) => d.deployment_id === deployment.id)!.state, 'rejected');
  });

  it(`status reports (no state) need a comment; at most ${MAX_STATUS_REPORTS} per deployment — the 11th is 422 — and a comment over ${MAX_COMMENT_CHARACTERS} characters is 422 (exactly ${MAX_COMMENT_CHARACTERS} is fine); the decision still comes after`, async () => {
    const { deployment, payload } = await deploy('production');
    const token = await installationToken(42, 7);
    const long = await callback(payload.deployment_callback_url, token, { environment_name: 'production', comment: 'é'.repeat(MAX_COMMENT_CHARACTERS + 1) });
    assert.equal(long.status, 422);
    assert.equal(long.body.message, 'Validation Failed');
    assert.deepEqual([long.body.errors[0].field, long.body.errors[0].message], ['comment', 'comment is too long (maximum is 1024 characters)']);
    const longDecision = await callback(payload.deployment_callback_url, token, {
      environment_name: 'production',
      state: 'approved',
      comment: 'x'.repeat(MAX_COMMENT_CHARACTERS + 1),
    });
    assert.equal(longDecision.status, 422, 'a decision with a long comment decides nothing');
    assert.equal((await callback(payload.deployment_callback_url, token, { environment_name: 'production' })).status, 422, 'a report needs a comment');
    assert.equal(
      (await callback(payload.deployment_callback_url, token, { environment_name: 'production', comment: 'é'.repeat(MAX_COMMENT_CHARACTERS) })).status,
      204,
    );
    for (let i = 2; i <= MAX_STATUS_REPORTS; i++) {
      const report = await callback(payload.deployment_callback_url, token, { environment_name: 'production', comment: `gate running: ${i}/10` });
      assert.equal(report.status, 204, `report ${i}`);
    }
    const eleventh = await callback(payload.deployment_callback_url, token, { environment_name: 'production', comment: 'one too many' });
    assert.equal(eleventh.status, 422);
    assert.match(eleventh.body.errors[0].message, /at most 10 status reports/);
    const admin = (await call(server.url, 'GET', `/_gantry/deployments/${deployment.id}`)).body;
    assert.equal(admin.reports.length, MAX_STATUS_REPORTS);
    assert.equal(admin.reports[9].comment, 'gate running: 10/10');
    assert.equal(admin.state, 'waiting');
    assert.equal(
      (await callback(payload.deployment_callback_url, token, { environment_name: 'production', state: 'approved' })).status,
      204,
      'a decision without a comment is fine',
    );
    assert.equal((await latestStatus(deployment.id)).state, 'success');
  });

  it("the callback refuses whoever is not the rule's app: no credentials 401, a personal or workflow token 403, another app's installation 404, an unknown run 404; a bad state, no environment_name or another environment 422", async () => {
    const { deployment, payload } = await deploy('production');
    const url = payload.deployment_callback_url as string;
    const body = { environment_name: 'production', state: 'approved' };
    assert.equal((await callback(url, undefined, body)).status, 401);
    const personal = await callback(url, TOKEN, body);
    assert.equal(personal.status, 403);
    assert.match(personal.body.message, /^Resource not accessible by personal access token/);
    const workflow = await callback(url, server.issueToken({ kind: 'workflow', repository: 'gantry/demo' }), body);
    assert.deepEqual([workflow.status, workflow.body.message], [403, 'Resource not accessible by integration']);
    assert.equal((await callback(url, await installationToken(43, 8, other.privateKey), body)).status, 404, 'an app reviews only its own rules');
    const token = await installationToken(42, 7);
    assert.equal((await callback(url.replace(/runs\/\d+/, 'runs/1'), token, body)).status, 404);
    assert.equal(
      (await call(server.url, 'POST', new URL(url).pathname.replace('gantry/demo', 'gantry/site'), { token, body })).status,
      404,
      'a run of another repository',
    );
    for (const bad of [
      { environment_name: 'production', state: 'maybe' },
      { state: 'approved' },
      { environment_name: 'staging', state: 'approved' },
      { environment_name: 'production', state: 'approved', comment: 7 },
    ]) {
      const answer = await callback(url, token, bad);
      assert.equal(answer.status, 422, JSON.stringify(bad));
      assert.equal(answer.body.message, 'Validation Failed');
    }
    assert.equal((await latestStatus(deployment.id)).state, 'waiting', 'nothing was decided');
  });

  it('two apps protecting one environment: each gets its own request; the deployment proceeds once both approved', async () => {
    await call(server.url, 'PUT', '/repos/gantry/demo/environments/dual', { token: TOKEN, body: {} });
    for (const id of [42, 43])
      assert.equal(
        (await call(server.url, 'POST', '/repos/gantry/demo/environments/dual/deployment_protection_rules', { token: TOKEN, body: { integration_id: id } }))
          .status,
        201,
      );
    const { deployment, payload } = await deploy('dual');
    const second = await receiver.next(
      (r) => r.path === '/hooks/app43' && r.header('x-platform-event') === 'deployment_protection_rule' && r.json().deployment.id === deployment.id,
    );
    assert.ok(signatureMatches(second.header('x-hub-signature-256'), 'sha256', 'other-app-secret-2c9d', second.body));
    assert.equal(second.json().installation.id, 8);
    assert.equal(
      (await callback(payload.deployment_callback_url, await installationToken(42, 7), { environment_name: 'dual', state: 'approved' })).status,
      204,
    );
    assert.equal((await latestStatus(deployment.id)).state, 'waiting', 'one of two approved');
    assert.equal(
      (await callback(payload.deployment_callback_url, await installationToken(43, 8, other.privateKey), { environment_name: 'dual', state: 'approved' }))
        .status,
      204,
    );
    assert.equal((await latestStatus(deployment.id)).state, 'success');
  });

  it('an app without a webhook URL is not asked (the deployment waits; /_gantry says why); PATCH /app/hook/config sets one and later deployments are delivered; repository hooks never get deployment_protection_rule, even subscribed to *', async () => {
    const hook = await call(server.url, 'POST', '/repos/gantry/demo/hooks', {
      token: TOKEN,
      body: { config: { url: `${receiver.url}/repo-all`, content_type: 'json' }, events: ['*'] },
    });
    assert.equal(hook.status, 201);
    assert.equal((await call(server.url, 'PATCH', '/app/hook/config', { token: jwt(42), body: { url: '' } })).status, 200);
    try {
      const quiet = await call(server.url, 'POST', '/repos/gantry/demo/deployments', {
        token: TOKEN,
        body: { ref: 'main', environment: 'production', required_contexts: [] },
      });
      await server.webhooks.idle();
      const admin = (await call(server.url, 'GET', `/_gantry/deployments/${quiet.body.id}`)).body;
      assert.equal(admin.state, 'waiting');
      assert.equal(admin.rules[0].delivery_guid, null);
      assert.match(admin.rules[0].not_delivered, /no webhook URL/);
      assert.ok(
        (await call(server.url, 'GET', '/_gantry/deliveries')).body.dropped.some(
          (d: { event: string; reason: string }) => d.event === 'deployment_protection_rule' && /no webhook URL/.test(d.reason),
        ),
      );
    } finally {
      assert.equal((await call(server.url, 'PATCH', '/app/hook/config', { token: jwt(42), body: { url: `${receiver.url}/app42` } })).status, 200);
    }
    const { deployment } = await deploy('production');
    await server.webhooks.idle();
    const repoEvents = receiver.received.filter((r) => r.path === '/hooks/repo-all').map((r) => r.header('x-platform-event'));
    assert.ok(repoEvents.includes('deployment'));
    assert.ok(!repoEvents.includes('deployment_protection_rule'), 'an app-only event (availability A)');
    assert.ok(
      receiver.received.some(
        (r) =>
          r.path === '/hooks/repo-all' &&
          r.header('x-platform-event') === 'deployment_status' &&
          r.json().deployment_status.state === 'waiting' &&
          r.json().deployment.id === deployment.id,
      ),
    );
  });

  it('gantry dev: the dev app protects production on gantry/demo; GANTRY_DEV_PLATFORM_APP_WEBHOOK_URL receives its deliveries signed with the printed GANTRY_WEBHOOK_SECRET, and its installation token approves; a bad URL is refused before listening', async () => {
    const stateDir = await mkdtemp(path.join(tmpdir(), 'gantry-protection-'));
    const target = await startReceiver();
    const dev = await startDevPlatform({ host: '127.0.0.1', stateDir }, { GANTRY_DEV_PLATFORM_PORT: '0', GANTRY_DEV_PLATFORM_APP_WEBHOOK_URL: target.url });
    try {
      const secret = dev.env!.GANTRY_WEBHOOK_SECRET!;
      assert.match(secret, /^[0-9a-f]{40}$/);
      assert.equal(dev.credentials.webhookSecret, secret);
      const token = dev.credentials.token!;
      const created = await call(dev.url, 'POST', '/repos/gantry/demo/deployments', {
        token,
        body: { ref: 'main', environment: 'production', required_contexts: [] },
      });
      assert.equal(created.status, 201);
      const request = await target.next((r) => r.header('x-platform-event') === 'deployment_protection_rule');
      assert.ok(signatureMatches(request.header('x-hub-signature-256'), 'sha256', secret, request.body));
      const payload = request.json();
      assert.equal(payload.installation.id, Number(dev.credentials.installationId));
      const key = await readFile(dev.env!.GANTRY_APP_PRIVATE_KEY_FILE!, 'utf8');
      const issued = await call(dev.url, 'POST', `/app/installations/${payload.installation.id}/access_tokens`, {
        token: appJwt(key, { iss: Number(dev.env!.GANTRY_APP_ID), iat: now() - 30, exp: now() + 500 }),
      });
      assert.equal(
        (
          await call(dev.url, 'POST', new URL(payload.deployment_callback_url).pathname, {
            token: issued.body.token,
            body: { environment_name: 'production', state: 'approved', comment: 'ok' },
          })
        ).status,
        204,
      );
      assert.equal((await call(dev.url, 'GET', `/repos/gantry/demo/deployments/${created.body.id}/statuses`, { token })).body[0].state, 'success');
      const config = await call(dev.url, 'GET', '/app/hook/config', { token: appJwt(key, { iss: 1, iat: now() - 30, exp: now() + 500 }) });
      assert.deepEqual(config.body, { content_type: 'json', insecure_ssl: '0', url: target.url, secret: '********' });
    } finally {
      await dev.stop();
      await target.close();
    }
    const fixed = await startDevPlatform({ host: '127.0.0.1', stateDir }, { GANTRY_DEV_PLATFORM_PORT: '0', GANTRY_DEV_PLATFORM_APP_WEBHOOK_SECRET: 'chosen' });
    try {
      assert.equal(fixed.env!.GANTRY_WEBHOOK_SECRET, 'chosen');
      assert.equal(fixed.credentials.appWebhookUrl, undefined);
    } finally {
      await fixed.stop();
    }
    await assert.rejects(
      startDevPlatform({ host: '127.0.0.1', stateDir }, { GANTRY_DEV_PLATFORM_PORT: '0', GANTRY_DEV_PLATFORM_APP_WEBHOOK_URL: 'ftp://x' }),
      /GANTRY_DEV_PLATFORM_APP_WEBHOOK_URL must be an http\(s\) URL/,
    );
    await rm(stateDir, { recursive: true, force: true });
  });
});
