// The embedded platform's webhooks: repository hooks and an app's webhook configured through GitHub's REST API renamed,
// deliveries with every header of spec §C signed over the exact bytes (checked here with node:crypto by a plain
// node:http receiver), json and form bodies, the ping, the delivery log and redelivery under the same GUID, failures,
// the 10 s budget and the 25 MB cap.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { DELIVERY_TIMEOUT_MS, MAX_PAYLOAD_BYTES, startPlatformServer, type PlatformServer } from '../../../devserver/platform/index.js';
import { appJwt, call, sleep } from './helpers.js';
import { GUID, signatureMatches, startReceiver, type Receiver } from './receiver.js';

const SECRET = 'It’s a Secret to Everybody';

describe('devserver/platform: webhooks (HOOK-*)', function () {
  this.timeout(30_000);
  const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  let server: PlatformServer;
  let receiver: Receiver;
  let token: string;
  const now = () => Math.floor(Date.now() / 1000);
  const jwt = (iss = 42) => appJwt(keys.privateKey, { iat: now() - 30, exp: now() + 540, iss });
  let hooksMade = 0;
  /** A hook of gantry/demo to the receiver (a path of its own), its id. */
  const makeHook = async (config: Record<string, unknown>, rest: Record<string, unknown> = {}, repo = 'gantry/demo'): Promise<{ id: number; path: string }> => {
    const path = `/hooks/${++hooksMade}`;
    const made = await call(server.url, 'POST', `/repos/${repo}/hooks`, {
      token,
      body: { config: { url: receiver.url.replace('/hooks', path), ...config }, ...rest },
    });
    assert.equal(made.status, 201, made.text);
    return { id: made.body.id, path };
  };
  const at = (path: string) => (r: { path: string }) => r.path === path;

  before(async () => {
    receiver = await startReceiver();
    server = await startPlatformServer({
      repositories: [
        { owner: 'gantry', name: 'demo', branches: { release: 'a'.repeat(40) } },
        { owner: 'gantry', name: 'site' },
        { owner: 'other', name: 'x' },
      ],
      tokens: [{ kind: 'personal', login: 'dev', token: 'ghp_webhooksdevtoken000000000000000000' }],
      apps: [
        {
          id: 42,
          publicKey: keys.publicKey,
          installations: [{ id: 7, account: 'gantry', repositories: ['gantry/demo'] }],
          webhook: { url: `${receiver.url}/app`, secret: SECRET, contentType: 'json' },
        },
      ],
    });
    token = 'ghp_webhooksdevtoken000000000000000000';
  });
  after(async () => {
    await server.stop();
    await receiver.close();
  });

  it("HOOK-OVERVIEW-POST HOOK-DEL-REQUEST HOOK-AUTH-HMAC HOOK-HDR-HOOK-ID HOOK-HDR-EVENT HOOK-HDR-DELIVERY HOOK-HDR-SIGNATURE-SHA1 HOOK-HDR-SIGNATURE-SHA256 HOOK-HDR-USER-AGENT HOOK-HDR-TARGET-TYPE HOOK-HDR-TARGET-ID HOOK-HDR-CONTENT-TYPE HOOK-HDR-CONTENT-LENGTH: creating a json hook with a secret sends GitHub's ping as a POST carrying every header of the table, signed over the exact bytes", async () => {
    const { id, path } = await makeHook({ content_type: 'json', secret: SECRET }, { events: ['status'] });
    const ping = await receiver.next(at(path));
    assert.equal(ping.method, 'POST');
    const repo = await call(server.url, 'GET', '/repos/gantry/demo', { token });
    assert.equal(ping.header('x-platform-hook-id'), String(id));
    assert.equal(ping.header('x-platform-event'), 'ping');
    assert.match(ping.header('x-platform-delivery')!, GUID);
    assert.match(ping.header('user-agent')!, /^Platform-Hookshot\/[0-9a-f]{7}$/);
    assert.equal(ping.header('x-platform-hook-installation-target-type'), 'repository');
    assert.equal(ping.header('x-platform-hook-installation-target-id'), String(repo.body.id));
    assert.equal(ping.header('content-type'), 'application/json');
    assert.equal(ping.header('content-length'), String(ping.body.length));
    assert.ok(signatureMatches(ping.header('x-hub-signature'), 'sha1', SECRET, ping.body), 'X-Hub-Signature is sha1= of the body');
    assert.ok(signatureMatches(ping.header('x-hub-signature-256'), 'sha256', SECRET, ping.body), 'X-Hub-Signature-256 is sha256= of the body');
    assert.ok(!signatureMatches(ping.header('x-hub-signature-256'), 'sha256', 'another secret', ping.body));
    for (const name of [
      'X-Platform-Hook-ID',
      'X-Platform-Event',
      'X-Platform-Delivery',
      'X-Hub-Signature',
      'X-Hub-Signature-256',
      'User-Agent',
      'X-Platform-Hook-Installation-Target-Type',
      'X-Platform-Hook-Installation-Target-ID',
      'Content-Type',
      'Content-Length',
    ]) {
      assert.ok(ping.rawHeaderNames.includes(name), `${name} is sent as the table spells it`);
    }
    const payload = ping.json();
    assert.equal(typeof payload.zen, 'string');
    assert.equal(payload.hook_id, id);
    assert.equal(payload.hook.id, id);
    assert.equal(payload.hook.type, 'Repository');
    assert.deepEqual(payload.hook.events, ['status']);
    assert.equal(payload.hook.config.secret, '********', 'the secret is shown masked, as GitHub does');
    assert.equal(payload.repository.full_name, 'gantry/demo');
    assert.equal(payload.sender.login, 'dev');
    assert.ok(!ping.body.toString('utf8').includes(SECRET), 'the secret is never in a body');
  });

  it('HOOK-HDR-SIGNATURE-SHA1 HOOK-HDR-SIGNATURE-SHA256: a hook without a secret sends neither signature header; the secret is never returned by the API ("********")', async () => {
    const { id, path } = await makeHook({ content_type: 'json' });
    const ping = await receiver.next(at(path));
    assert.equal(ping.header('x-hub-signature'), undefined);
    assert.equal(ping.header('x-hub-signature-256'), undefined);
    const signed = await makeHook({ content_type: 'json', secret: 'hush' });
    await receiver.next(at(signed.path));
    for (const answer of [
      await call(server.url, 'GET', `/repos/gantry/demo/hooks/${signed.id}`, { token }),
      await call(server.url, 'GET', '/repos/gantry/demo/hooks', { token }),
      await call(server.url, 'GET', `/repos/gantry/demo/hooks/${signed.id}/config`, { token }),
    ]) {
      assert.equal(answer.status, 200);
      assert.ok(!answer.text.includes('hush'));
    }
    assert.equal((await call(server.url, 'GET', `/repos/gantry/demo/hooks/${signed.id}/config`, { token })).body.secret, '********');
    assert.equal((await call(server.url, 'GET', `/repos/gantry/demo/hooks/${id}/config`, { token })).body.secret, undefined);
  });

  it("HOOK-DEL-REQUEST HOOK-HDR-CONTENT-TYPE HOOK-HDR-CONTENT-LENGTH: a form hook (GitHub's default content type) sends payload=<urlencoded JSON>, signed over the form bytes; non-ASCII text counts in bytes", async () => {
    const { path } = await makeHook({ secret: SECRET }, { events: ['status'] }); // no content_type: form, as GitHub's
    const ping = await receiver.next(at(path));
    assert.equal(ping.header('content-type'), 'application/x-www-form-urlencoded');
    assert.match(ping.body.toString('utf8'), /^payload=/);
    assert.ok(signatureMatches(ping.header('x-hub-signature-256'), 'sha256', SECRET, ping.body));
    assert.equal(ping.json().zen.length > 0, true);
    const description = 'Déployé ✓ — 🚀 ok & done = yes';
    assert.equal(
      (await call(server.url, 'POST', '/repos/gantry/demo/statuses/main', { token, body: { state: 'success', context: 'ci/form', description } })).status,
      201,
    );
    const status = await receiver.next((r) => at(path)(r) && r.header('x-platform-event') === 'status');
    assert.equal(status.header('content-length'), String(status.body.length));
    assert.ok(signatureMatches(status.header('x-hub-signature'), 'sha1', SECRET, status.body));
    assert.ok(signatureMatches(status.header('x-hub-signature-256'), 'sha256', SECRET, status.body));
    const form = new URLSearchParams(status.body.toString('utf8'));
    assert.deepEqual([...form.keys()], ['payload']);
    assert.equal(JSON.parse(form.get('payload')!).description, description);
  });

  it("HOOK-EV-STATUS HOOK-COMMON-PROPS HOOK-REQ-DEFAULT HOOK-DEL-EXAMPLE-BODY: a commit status sends `status` with GitHub's properties, the repository, the organization and the sender", async () => {
    const { path } = await makeHook({ content_type: 'json' }, { events: ['status'] });
    await receiver.next(at(path));
    const sha = 'a'.repeat(40);
    const description = 'too slow — 3,2 s ⏱';
    assert.equal(
      (
        await call(server.url, 'POST', `/repos/gantry/demo/statuses/${sha}`, {
          token,
          body: { state: 'failure', context: 'gantry/gate', description, target_url: 'https://example.com/r' },
        })
      ).status,
      201,
    );
    const delivery = await receiver.next((r) => at(path)(r) && r.header('x-platform-event') === 'status');
    assert.equal(delivery.header('content-length'), String(delivery.body.length), 'Content-Length counts bytes');
    assert.ok(delivery.body.length > delivery.body.toString('utf8').length, 'the body holds non-ASCII text as UTF-8');
    const status = delivery.json();
    assert.equal(status.description, description);
    for (const key of ['branches', 'commit', 'context', 'created_at', 'name', 'updated_at', 'sha', 'description', 'id', 'state', 'target_url'])
      assert.ok(key in status, key);
    assert.equal(status.sha, sha);
    assert.equal(status.state, 'failure');
    assert.equal(status.context, 'gantry/gate');
    assert.equal(status.name, 'gantry/demo');
    assert.equal(status.target_url, 'https://example.com/r');
    assert.deepEqual(
      status.branches.map((b: { name: string }) => b.name),
      ['release'],
    );
    assert.equal(status.commit.sha, sha);
    assert.equal(status.repository.full_name, 'gantry/demo');
    assert.equal(status.organization.login, 'gantry');
    assert.equal(status.sender.login, 'dev');
    assert.equal(status.installation, undefined, "a repository hook's payload names no installation");
  });

  it('HOOK-EV-DEPLOYMENT HOOK-EV-DEPLOYMENT-STATUS: deployments and their statuses send `deployment` and `deployment_status` (action created); a status in an inactive state is never sent', async () => {
    const { path } = await makeHook({ content_type: 'json' }, { events: ['deployment', 'deployment_status'] });
    await receiver.next(at(path));
    const event = (name: string) => (r: { path: string; header(n: string): string | undefined }) => at(path)(r) && r.header('x-platform-event') === name;
    const first = await call(server.url, 'POST', '/repos/gantry/demo/deployments', { token, body: { ref: 'main', environment: 'qa', required_contexts: [] } });
    assert.equal(first.status, 201);
    const deployment = (await receiver.next(event('deployment'))).json();
    assert.equal(deployment.action, 'created');
    assert.equal(deployment.deployment.id, first.body.id);
    assert.equal(deployment.deployment.environment, 'qa');
    assert.equal(deployment.workflow, null);
    assert.equal(deployment.workflow_run, null);
    assert.equal(deployment.repository.full_name, 'gantry/demo');
    assert.equal(
      (
        await call(server.url, 'POST', `/repos/gantry/demo/deployments/${first.body.id}/statuses`, {
          token,
          body: { state: 'success', environment_url: 'https://qa.example.com' },
        })
      ).status,
      201,
    );
    const status = (await receiver.next(event('deployment_status'))).json();
    assert.equal(status.action, 'created');
    assert.equal(status.deployment_status.state, 'success');
    assert.equal(status.deployment_status.environment_url, 'https://qa.example.com');
    assert.equal(status.deployment.id, first.body.id);
    // A second success marks the first deployment inactive: that status is no delivery.
    const second = await call(server.url, 'POST', '/repos/gantry/demo/deployments', { token, body: { ref: 'main', environment: 'qa', required_contexts: [] } });
    await receiver.next(event('deployment'));
    await call(server.url, 'POST', `/repos/gantry/demo/deployments/${second.body.id}/statuses`, { token, body: { state: 'success' } });
    const later = (await receiver.next(event('deployment_status'))).json();
    assert.equal(later.deployment.id, second.body.id);
    const firstStatuses = await call(server.url, 'GET', `/repos/gantry/demo/deployments/${first.body.id}/statuses`, { token });
    assert.equal(firstStatuses.body[0].state, 'inactive');
    await server.webhooks.idle();
    await call(server.url, 'POST', `/repos/gantry/demo/deployments/${first.body.id}/statuses`, { token, body: { state: 'inactive' } });
    await server.webhooks.idle();
    assert.ok(
      receiver.events('deployment_status').every((r) => r.json().deployment_status.state !== 'inactive'),
      'no inactive deployment_status is delivered',
    );
  });

  it("HOOK-SUBSCRIBE-ONLY-HANDLED: a hook gets only the events it is subscribed to (`*` all of a repository's), an inactive hook nothing, another repository's hook nothing; DELETE ends its deliveries", async () => {
    const onlyStatus = await makeHook({ content_type: 'json' }, { events: ['status'] });
    const all = await makeHook({ content_type: 'json' }, { events: ['*'] });
    const inactive = await makeHook({ content_type: 'json' }, { events: ['*'], active: false });
    const elsewhere = await makeHook({ content_type: 'json' }, { events: ['*'] }, 'gantry/site');
    await receiver.next(at(onlyStatus.path));
    await receiver.next(at(all.path));
    await receiver.next(at(elsewhere.path));
    await call(server.url, 'POST', '/repos/gantry/demo/deployments', { token, body: { ref: 'main', environment: 'subscribe', required_contexts: [] } });
    await call(server.url, 'POST', '/repos/gantry/demo/statuses/main', { token, body: { state: 'pending', context: 'sub' } });
    await server.webhooks.idle();
    const events = (path: string) => receiver.received.filter(at(path)).map((r) => r.header('x-platform-event'));
    assert.deepEqual(events(onlyStatus.path), ['ping', 'status']);
    assert.deepEqual(events(all.path).sort(), ['deployment', 'ping', 'status']);
    assert.deepEqual(events(inactive.path), [], 'an inactive hook is not even pinged');
    assert.deepEqual(events(elsewhere.path), ['ping']);
    assert.equal((await call(server.url, 'DELETE', `/repos/gantry/demo/hooks/${all.id}`, { token })).status, 204);
    assert.equal((await call(server.url, 'GET', `/repos/gantry/demo/hooks/${all.id}`, { token })).status, 404);
    await call(server.url, 'POST', '/repos/gantry/demo/statuses/main', { token, body: { state: 'success', context: 'sub' } });
    await server.webhooks.idle();
    assert.deepEqual(events(all.path).sort(), ['deployment', 'ping', 'status']);
    // PATCH: add_events / remove_events / active, as GitHub's.
    const patched = await call(server.url, 'PATCH', `/repos/gantry/demo/hooks/${onlyStatus.id}`, {
      token,
      body: { add_events: ['deployment'], remove_events: ['status'] },
    });
    assert.deepEqual(patched.body.events, ['deployment']);
    const activated = await call(server.url, 'PATCH', `/repos/gantry/demo/hooks/${inactive.id}`, { token, body: { active: true } });
    assert.equal(activated.body.active, true);
  });

  it('a delivery log per hook (newest first) with the request and the answer; POST …/attempts redelivers with the SAME GUID and redelivery: true, signed with the secret as it is now', async () => {
    const { id, path } = await makeHook({ content_type: 'json', secret: 'old secret' }, { events: ['status'] });
    const ping = await receiver.next(at(path));
    await server.webhooks.idle();
    const log = await call(server.url, 'GET', `/repos/gantry/demo/hooks/${id}/deliveries`, { token });
    assert.equal(log.status, 200);
    assert.equal(log.body.length, 1);
    const entry = log.body[0];
    assert.equal(entry.guid, ping.header('x-platform-delivery'));
    assert.deepEqual([entry.event, entry.action, entry.status, entry.status_code, entry.redelivery], ['ping', null, 'OK', 200, false]);
    assert.equal(typeof entry.duration, 'number');
    const detail = await call(server.url, 'GET', `/repos/gantry/demo/hooks/${id}/deliveries/${entry.id}`, { token });
    assert.equal(detail.body.request.headers['X-Platform-Delivery'], entry.guid);
    assert.equal(detail.body.request.payload.hook_id, id);
    assert.equal(detail.body.response.payload, 'ok');
    assert.equal(detail.body.response.headers['x-receiver'], 'test');
    assert.equal(detail.body.url, receiver.url.replace('/hooks', path));
    // Rotate the secret, then redeliver: the same GUID and payload, signed with the new secret.
    assert.equal((await call(server.url, 'PATCH', `/repos/gantry/demo/hooks/${id}/config`, { token, body: { secret: 'new secret' } })).status, 200);
    const again = await call(server.url, 'POST', `/repos/gantry/demo/hooks/${id}/deliveries/${entry.id}/attempts`, { token });
    assert.equal(again.status, 202);
    const redelivered = await receiver.next(at(path));
    assert.equal(redelivered.header('x-platform-delivery'), entry.guid);
    assert.equal(redelivered.header('x-platform-event'), 'ping');
    assert.deepEqual(redelivered.json(), ping.json());
    assert.ok(signatureMatches(redelivered.header('x-hub-signature-256'), 'sha256', 'new secret', redelivered.body));
    await server.webhooks.idle();
    const after = await call(server.url, 'GET', `/repos/gantry/demo/hooks/${id}/deliveries`, { token });
    assert.equal(after.body.length, 2);
    assert.equal(after.body[0].guid, entry.guid);
    assert.equal(after.body[0].redelivery, true);
    assert.notEqual(after.body[0].id, entry.id);
    assert.equal((await call(server.url, 'POST', `/repos/gantry/demo/hooks/${id}/deliveries/999999/attempts`, { token })).status, 404);
  });

  it('failures are logged as GitHub shows them: a 500 ("Invalid HTTP Response: 500"), a closed port ("failed to connect to host", 0); the hook\'s last_response follows', async () => {
    const { id, path } = await makeHook({ content_type: 'json' }, { events: ['status'] });
    await receiver.next(at(path));
    receiver.answer = (r) => (r.path === path ? { status: 500, body: 'boom' } : { status: 200 });
    try {
      await call(server.url, 'POST', `/repos/gantry/demo/hooks/${id}/pings`, { token });
      await receiver.next(at(path));
      await server.webhooks.idle();
    } finally {
      receiver.answer = () => ({ status: 200, body: 'ok' });
    }
    const failed = (await call(server.url, 'GET', `/repos/gantry/demo/hooks/${id}/deliveries`, { token })).body[0];
    assert.deepEqual([failed.status, failed.status_code], ['Invalid HTTP Response: 500', 500]);
    assert.deepEqual((await call(server.url, 'GET', `/repos/gantry/demo/hooks/${id}`, { token })).body.last_response, {
      code: 500,
      status: 'failed',
      message: 'Invalid HTTP Response: 500',
    });
    const closed = await startReceiver();
    const url = closed.url;
    await closed.close();
    const dead = await call(server.url, 'POST', '/repos/gantry/demo/hooks', { token, body: { config: { url, content_type: 'json' } } });
    assert.equal(dead.status, 201);
    await server.webhooks.idle();
    const refused = (await call(server.url, 'GET', `/repos/gantry/demo/hooks/${dead.body.id}/deliveries`, { token })).body[0];
    assert.deepEqual([refused.status, refused.status_code], ['failed to connect to host', 0]);
  });

  it(`GitHub's ${DELIVERY_TIMEOUT_MS / 1000} s budget: a receiver that takes 9 s is delivered, one that never answers is "timed out" at 10 s (the default), and a shorter budget can be set`, async function () {
    this.timeout(40_000);
    const slow = await makeHook({ content_type: 'json' }, { events: ['status'] });
    const never = await makeHook({ content_type: 'json' }, { events: ['status'] });
    await receiver.next(at(slow.path));
    await receiver.next(at(never.path));
    await server.webhooks.idle();
    receiver.answer = (r) => (r.path === slow.path ? { delayMs: 9000 } : r.path === never.path ? { hang: true } : { status: 200 });
    const started = Date.now();
    try {
      await call(server.url, 'POST', '/repos/gantry/demo/statuses/main', { token, body: { state: 'success', context: 'slow' } });
      await server.webhooks.idle();
    } finally {
      receiver.answer = () => ({ status: 200, body: 'ok' });
    }
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 9900 && elapsed < 13_000, `${elapsed} ms`);
    const slowEntry = (await call(server.url, 'GET', `/repos/gantry/demo/hooks/${slow.id}/deliveries`, { token })).body[0];
    const neverEntry = (await call(server.url, 'GET', `/repos/gantry/demo/hooks/${never.id}/deliveries`, { token })).body[0];
    assert.deepEqual([slowEntry.event, slowEntry.status, slowEntry.status_code], ['status', 'OK', 200]);
    assert.ok(slowEntry.duration >= 8.9 && slowEntry.duration < 10, String(slowEntry.duration));
    assert.deepEqual([neverEntry.event, neverEntry.status, neverEntry.status_code], ['status', 'timed out', 0]);
    assert.ok(neverEntry.duration >= 9.9 && neverEntry.duration < 11, String(neverEntry.duration));

    const quick = await startPlatformServer({ tokens: [{ kind: 'personal', token: 'ghp_quickquickquickquickquickquickquick' }], webhookTimeoutMs: 300 });
    const hung = await startReceiver(() => ({ hang: true }));
    try {
      const made = await call(quick.url, 'POST', '/repos/gantry/demo/hooks', {
        token: 'ghp_quickquickquickquickquickquickquick',
        body: { config: { url: hung.url, content_type: 'json' } },
      });
      await hung.next();
      await quick.webhooks.idle();
      const entry = (await call(quick.url, 'GET', `/repos/gantry/demo/hooks/${made.body.id}/deliveries`, { token: 'ghp_quickquickquickquickquickquickquick' }))
        .body[0];
      assert.deepEqual([entry.status, entry.status_code], ['timed out', 0]);
      assert.ok(entry.duration < 2, String(entry.duration));
    } finally {
      await quick.stop();
      await hung.close();
    }
  });

  it('HOOK-LIM-PAYLOAD-25MB: a payload over the cap (25 MiB by default; smaller here) is not delivered at all — no request, no log entry, listed as dropped with the reason', async () => {
    assert.equal(MAX_PAYLOAD_BYTES, 25 * 1024 * 1024);
    const small = await startPlatformServer({
      tokens: [{ kind: 'personal', token: 'ghp_smallsmallsmallsmallsmallsmallsmal' }],
      webhookMaxPayloadBytes: 8 * 1024,
    });
    const target = await startReceiver();
    const auth = { token: 'ghp_smallsmallsmallsmallsmallsmallsmal' };
    try {
      const made = await call(small.url, 'POST', '/repos/gantry/demo/hooks', {
        ...auth,
        body: { config: { url: target.url, content_type: 'json' }, events: ['deployment'] },
      });
      await target.next();
      await call(small.url, 'POST', '/repos/gantry/demo/deployments', {
        ...auth,
        body: { ref: 'main', environment: 'big', required_contexts: [], payload: { blob: 'x'.repeat(10 * 1024) } },
      });
      await call(small.url, 'POST', '/repos/gantry/demo/deployments', {
        ...auth,
        body: { ref: 'main', environment: 'small', required_contexts: [], payload: { blob: 'x' } },
      });
      const delivered = await target.next((r) => r.header('x-platform-event') === 'deployment');
      assert.equal(delivered.json().deployment.environment, 'small');
      await small.webhooks.idle();
      assert.equal(target.events('deployment').length, 1, 'the big one never arrived');
      const log = (await call(small.url, 'GET', `/repos/gantry/demo/hooks/${made.body.id}/deliveries`, auth)).body;
      assert.deepEqual(
        log.map((d: { event: string }) => d.event),
        ['deployment', 'ping'],
      );
      const report = await call(small.url, 'GET', '/_gantry/deliveries');
      assert.equal(report.body.dropped.length, 1);
      assert.equal(report.body.dropped[0].event, 'deployment');
      assert.match(report.body.dropped[0].reason, /over the 8192-byte cap \(HOOK-LIM-PAYLOAD-25MB\)/);
    } finally {
      await small.stop();
      await target.close();
    }
  });

  it("HOOK-WEBHOOK-TYPES HOOK-HDR-TARGET-TYPE HOOK-HDR-TARGET-ID: the app's webhook (GET/PATCH /app/hook/config with its JWT) gets its installations' events as target `integration` with the app's id and the installation in the payload; a repository outside the installation sends it nothing", async () => {
    const config = await call(server.url, 'GET', '/app/hook/config', { token: jwt() });
    assert.equal(config.status, 200);
    assert.deepEqual(config.body, { content_type: 'json', insecure_ssl: '0', url: `${receiver.url}/app`, secret: '********' });
    assert.equal((await call(server.url, 'GET', '/app/hook/config', { token })).status, 401, 'a personal token is no JWT');
    const appPath = '/hooks/app';
    await call(server.url, 'POST', '/repos/gantry/site/statuses/main', { token, body: { state: 'success', context: 'elsewhere' } });
    await call(server.url, 'POST', '/repos/gantry/demo/statuses/main', { token, body: { state: 'success', context: 'app' } });
    const status = await receiver.next((r) => r.path === appPath && r.header('x-platform-event') === 'status');
    assert.equal(status.header('x-platform-hook-installation-target-type'), 'integration');
    assert.equal(status.header('x-platform-hook-installation-target-id'), '42');
    assert.ok(signatureMatches(status.header('x-hub-signature-256'), 'sha256', SECRET, status.body));
    assert.ok(signatureMatches(status.header('x-hub-signature'), 'sha1', SECRET, status.body));
    const payload = status.json();
    assert.equal(payload.installation.id, 7);
    assert.equal(payload.repository.full_name, 'gantry/demo');
    await server.webhooks.idle();
    assert.ok(
      receiver.received.filter((r) => r.path === appPath).every((r) => r.json().repository.full_name === 'gantry/demo'),
      'gantry/site is outside installation 7',
    );
    // The app's delivery log and redelivery.
    const log = await call(server.url, 'GET', '/app/hook/deliveries', { token: jwt() });
    assert.equal(log.status, 200);
    const entry = log.body.find((d: { guid: string }) => d.guid === status.header('x-platform-delivery'));
    assert.equal(entry.installation_id, 7);
    const detail = await call(server.url, 'GET', `/app/hook/deliveries/${entry.id}`, { token: jwt() });
    assert.equal(detail.body.request.payload.installation.id, 7);
    assert.equal((await call(server.url, 'POST', `/app/hook/deliveries/${entry.id}/attempts`, { token: jwt() })).status, 202);
    const again = await receiver.next((r) => r.path === appPath && r.header('x-platform-delivery') === entry.guid);
    assert.deepEqual(again.json(), payload);
    // PATCH: the form type, then no URL (nothing delivered), then back.
    const patched = await call(server.url, 'PATCH', '/app/hook/config', { token: jwt(), body: { content_type: 'form' } });
    assert.deepEqual(patched.body, { content_type: 'form', insecure_ssl: '0', url: `${receiver.url}/app`, secret: '********' });
    await call(server.url, 'POST', '/repos/gantry/demo/statuses/main', { token, body: { state: 'success', context: 'form' } });
    const form = await receiver.next((r) => r.path === appPath && r.json().context === 'form');
    assert.equal(form.header('content-type'), 'application/x-www-form-urlencoded');
    assert.equal((await call(server.url, 'PATCH', '/app/hook/config', { token: jwt(), body: { url: 'ftp://nope' } })).status, 422);
    assert.equal((await call(server.url, 'PATCH', '/app/hook/config', { token: jwt(), body: { content_type: 'xml' } })).status, 422);
    const cleared = await call(server.url, 'PATCH', '/app/hook/config', { token: jwt(), body: { content_type: 'json', url: '' } });
    assert.equal(cleared.body.url, '');
    await server.webhooks.idle();
    const before = receiver.received.filter((r) => r.path === appPath).length;
    await call(server.url, 'POST', '/repos/gantry/demo/statuses/main', { token, body: { state: 'success', context: 'nowhere' } });
    await server.webhooks.idle();
    assert.equal(receiver.received.filter((r) => r.path === appPath).length, before, 'no URL, no delivery');
    await call(server.url, 'PATCH', '/app/hook/config', { token: jwt(), body: { url: `${receiver.url}/app` } });
  });

  it("configuration is checked as GitHub checks it: 422 for no url, a bad url, a bad content type, bad events, a second hook to the same url; 401 without credentials, 403 for the workflow token, 404 for an unknown hook or another repository's", async () => {
    const workflow = server.issueToken({ kind: 'workflow', repository: 'gantry/demo' });
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ config: {} }, /Config must contain url/],
      [{ config: { url: 'not a url' } }, /not a valid http\(s\) URL/],
      [{ config: { url: 'http://127.0.0.1:9/x', content_type: 'xml' } }, /content_type must be "json" or "form"/],
      [{ config: { url: 'http://127.0.0.1:9/x', insecure_ssl: '2' } }, /insecure_ssl/],
      [{ config: { url: 'http://127.0.0.1:9/x' }, events: 'push' }, /Validation Failed/],
      [{ config: { url: 'http://127.0.0.1:9/x' }, name: 'email' }, /Name must be "web"/],
    ];
    for (const [body, message] of cases) {
      const answer = await call(server.url, 'POST', '/repos/gantry/demo/hooks', { token, body });
      assert.equal(answer.status, 422, JSON.stringify(body));
      assert.equal(answer.body.message, 'Validation Failed');
      assert.match([answer.body.message, ...answer.body.errors.map((e: { message?: string; code: string }) => e.message ?? e.code)].join(' '), message);
    }
    const first = await makeHook({ content_type: 'json' }, { events: [] });
    const duplicate = await call(server.url, 'POST', '/repos/gantry/demo/hooks', {
      token,
      body: { config: { url: receiver.url.replace('/hooks', first.path) } },
    });
    assert.equal(duplicate.status, 422);
    assert.match(duplicate.text, /Hook already exists on this repository/);
    assert.equal((await call(server.url, 'GET', '/repos/gantry/demo/hooks')).status, 401);
    const refused = await call(server.url, 'POST', '/repos/gantry/demo/hooks', { token: workflow, body: { config: { url: 'http://127.0.0.1:9/y' } } });
    assert.deepEqual([refused.status, refused.body.message], [403, 'Resource not accessible by integration']);
    assert.equal((await call(server.url, 'GET', '/repos/gantry/demo/hooks/123456', { token })).status, 404);
    assert.equal((await call(server.url, 'GET', `/repos/gantry/site/hooks/${first.id}`, { token })).status, 404);
    assert.equal(
      (await call(server.url, 'PATCH', `/repos/gantry/demo/hooks/${first.id}/config`, { token, body: { url: '' } })).status,
      422,
      'a repository hook keeps a url',
    );
  });

  it('/_gantry/deliveries lists every delivery (repository and app) with its answer; DELETE forgets them; hooks configured in the options deliver from the start', async () => {
    const target = await startReceiver();
    const own = await startPlatformServer({
      tokens: [{ kind: 'personal', token: 'ghp_ownownownownownownownownownownownown' }],
      hooks: [{ repository: 'gantry/demo', url: target.url, contentType: 'json', secret: 's', events: ['status'] }],
    });
    try {
      await call(own.url, 'POST', '/repos/gantry/demo/statuses/main', { token: 'ghp_ownownownownownownownownownownownown', body: { state: 'success' } });
      const got = await target.next();
      assert.equal(got.header('x-platform-event'), 'status', 'no ping for a hook given in the options');
      assert.ok(signatureMatches(got.header('x-hub-signature-256'), 'sha256', 's', got.body));
      await own.webhooks.idle();
      const report = await call(own.url, 'GET', '/_gantry/deliveries');
      assert.equal(report.status, 200);
      assert.equal(report.body.deliveries.length, 1);
      const d = report.body.deliveries[0];
      assert.deepEqual([d.event, d.status_code, d.status, d.target_type, d.pending, d.url], ['status', 200, 'OK', 'repository', false, target.url]);
      assert.equal(d.guid, got.header('x-platform-delivery'));
      assert.deepEqual(
        own.webhooks.deliveries().deliveries.map((x) => x.guid),
        [d.guid],
      );
      assert.equal((await call(own.url, 'DELETE', '/_gantry/deliveries')).body.deliveries.length, 0);
    } finally {
      await own.stop();
      await target.close();
    }
  });

  it('stop() ends deliveries in flight (recorded as failed) and the server closes at once', async () => {
    const hung = await startReceiver(() => ({ hang: true }));
    const own = await startPlatformServer({
      hooks: [{ repository: 'gantry/demo', url: hung.url, contentType: 'json', events: ['status'] }],
      tokens: [{ kind: 'personal', token: 'ghp_stopstopstopstopstopstopstopstopsto' }],
    });
    await call(own.url, 'POST', '/repos/gantry/demo/statuses/main', { token: 'ghp_stopstopstopstopstopstopstopstopsto', body: { state: 'success' } });
    await hung.next();
    const started = Date.now();
    await own.stop();
    assert.ok(Date.now() - started < 2000);
    const [entry] = own.webhooks.deliveries().deliveries;
    assert.equal(entry!.pending, false);
    assert.equal(entry!.status_code, 0);
    await hung.close();
    await sleep(10);
  });
});
