import assert from 'node:assert/strict';
import { readFile, readdir, rm, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSecretsServer, type SecretsServer, type SecretsServerOptions } from '../../devserver/secrets/index.js';
import type { PersistedState } from '../../devserver/secrets/state.js';
import {
  SecretsClient,
  SecretsConnectionError,
  SecretsError,
  SecretsLimitError,
  SecretsNoTokenError,
  resplit,
  type CreateSecretsClientOptions,
} from '../../lib/secrets/index.js';
import { makeTestPki, type TestPki } from '../peers/tls.js';
import { startServerProcess } from './helpers/server-process.js';

const fast = { retryWaitMinMs: 10, retryWaitMaxMs: 20 };

describe('secrets client against the embedded kv server (real sockets)', function () {
  this.timeout(60_000);
  let server: SecretsServer;
  let requestLog: string[];
  const clients: SecretsClient[] = [];

  async function start(options: SecretsServerOptions = {}): Promise<SecretsServer> {
    requestLog = [];
    server = await startSecretsServer({ log: (line) => requestLog.push(line), ...options });
    return server;
  }
  function client(options: CreateSecretsClientOptions = {}): SecretsClient {
    const c = new SecretsClient({ address: server.url, token: server.rootToken, ...fast, sources: { env: {}, pulumi: undefined }, ...options });
    clients.push(c);
    return c;
  }
  /** A client of a server other than the current one (`client()` reads `server`). */
  function clientOf(other: { url: string; rootToken: string }): SecretsClient {
    const c = new SecretsClient({ address: other.url, token: other.rootToken, ...fast, sources: { env: {}, pulumi: undefined } });
    clients.push(c);
    return c;
  }
  /** Starts a new server on `dataFile` (as after a crash) and checks what its kv v2 mount `secret/` serves. */
  async function afterRestart(dataFile: string, check: (kv: ReturnType<SecretsClient['kv']>) => Promise<void>): Promise<void> {
    const reloaded = await startSecretsServer({ dataFile });
    try {
      await check(clientOf(reloaded).kv('secret', { kvVersion: 2 }));
    } finally {
      await reloaded.stop();
    }
  }
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await server?.stop();
  });

  describe('kv v2', () => {
    beforeEach(() => start());

    it('SEC-KV2-DATA-PATH, SEC-KV2-PATH-DATA, SEC-EP-WRITE, SEC-EP-READ, SEC-STATUS-200: write wraps data, read returns it with version metadata', async () => {
      const kv = client().kv('secret');
      const first = await kv.write('app/db', { user: 'app', password: 's3cret' });
      assert.equal(first.kvVersion, 2);
      assert.equal(first.metadata?.version, 1);
      assert.ok(Date.parse(first.metadata!.createdTime) > 0);
      const second = await kv.write('app/db', { user: 'app', password: 'rotated' });
      assert.equal(second.metadata?.version, 2);
      const current = await kv.read('app/db');
      assert.equal(current.state, 'current');
      assert.deepEqual(current.data, { user: 'app', password: 'rotated' });
      assert.equal(current.metadata?.version, 2);
      const old = await kv.read('app/db', { version: 1 });
      assert.deepEqual(old.data, { user: 'app', password: 's3cret' });
      assert.equal((await kv.read('app/nothing')).state, 'missing');
    });

    it('SEC-MOUNT-DEFAULT-SECRET, SEC-API-PREFIX-V1, SEC-VER-V1-ONLY: the kv version is detected once per mount and cached; kvVersion skips detection', async () => {
      const c = client();
      await c.kv('secret').write('a', { v: 1 });
      await c.kv('secret').read('a');
      await c.kvAt('secret/a');
      const detections = () => requestLog.filter((l) => l.includes('sys/internal/ui/mounts')).length;
      assert.equal(detections(), 1, requestLog.join('\n'));
      const c2 = client();
      await c2.kv('secret', { kvVersion: 2 }).read('a');
      await c2.kvAt('secret/a', { kvVersion: 2 });
      assert.equal(detections(), 1, 'an explicit kvVersion sends no detection request');
      assert.ok(
        requestLog.every((l) => l.includes('/v1/')),
        requestLog.join('\n'),
      );
      assert.equal((await c.mountInfo('kv/x')).kvVersion, 1);
      // Concurrent first uses of a mount share one detection.
      const c3 = client();
      await Promise.all(Array.from({ length: 5 }, () => c3.kv('secret').read('a')));
      assert.equal(detections(), 3, requestLog.join('\n'));
    });

    it('SEC-KV2-PATH-DELETE, SEC-KV2-PATH-UNDELETE, SEC-KV2-PATH-DESTROY: deleted and destroyed versions are typed results with their metadata', async () => {
      const kv = client().kv('secret');
      await kv.write('app/api', { key: 'one' });
      await kv.write('app/api', { key: 'two' });
      await kv.delete('app/api');
      const deleted = await kv.read('app/api');
      assert.equal(deleted.state, 'deleted');
      assert.equal(deleted.data, null);
      assert.equal(deleted.metadata?.version, 2);
      assert.notEqual(deleted.metadata?.deletionTime, '');
      await kv.undelete('app/api', [2]);
      assert.deepEqual((await kv.read('app/api')).data, { key: 'two' });
      await kv.delete('app/api', { versions: [1] });
      assert.equal((await kv.read('app/api', { version: 1 })).state, 'deleted');
      await kv.destroy('app/api', [1]);
      const destroyed = await kv.read('app/api', { version: 1 });
      assert.equal(destroyed.state, 'destroyed');
      assert.equal(destroyed.metadata?.destroyed, true);
      const metadata = await kv.readMetadata('app/api');
      assert.equal(metadata?.versions['1']?.destroyed, true);
      assert.equal(metadata?.currentVersion, 2);
    });

    it('SEC-KV2-PATH-METADATA, SEC-KV2-VERSION-COUNT: metadata read/write, max_versions pruning, custom metadata, delete all', async () => {
      const kv = client().kv('secret');
      await kv.writeMetadata('svc', { maxVersions: 3, customMetadata: { owner: 'team-a' } });
      for (let i = 1; i <= 5; i++) await kv.write('svc', { n: i });
      const metadata = await kv.readMetadata('svc');
      assert.equal(metadata?.maxVersions, 3);
      assert.equal(metadata?.currentVersion, 5);
      assert.equal(metadata?.oldestVersion, 3);
      assert.deepEqual(Object.keys(metadata!.versions).sort(), ['3', '4', '5']);
      assert.deepEqual(metadata?.customMetadata, { owner: 'team-a' });
      assert.equal((await kv.read('svc', { version: 1 })).state, 'missing');
      assert.deepEqual((await kv.read('svc')).metadata?.customMetadata, { owner: 'team-a' });
      await kv.deleteMetadata('svc');
      assert.equal(await kv.readMetadata('svc'), undefined);
      assert.equal((await kv.read('svc')).state, 'missing');
    });

    it('custom metadata over the service limits (64 keys, 128-byte keys, 512-byte values) is refused before sending', async () => {
      const kv = client().kv('secret');
      const before = requestLog.length;
      await assert.rejects(kv.writeMetadata('svc', { customMetadata: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v'])) }), /at most 64/);
      await assert.rejects(kv.writeMetadata('svc', { customMetadata: { ['k'.repeat(129)]: 'v' } }), /128 bytes/);
      await assert.rejects(kv.writeMetadata('svc', { customMetadata: { k: 'v'.repeat(513) } }), /512 bytes/);
      assert.equal(requestLog.length - before, 1, 'only the version detection was sent');
    });

    it('SEC-KV2-PATH-CONFIG: mount config read and write (max_versions 0 means 10)', async () => {
      const kv = client().kv('secret');
      const initial = await kv.readConfig();
      assert.equal(initial.casRequired, false);
      await kv.writeConfig({ maxVersions: 2, casRequired: true });
      assert.deepEqual({ ...(await kv.readConfig()), deleteVersionAfter: undefined }, { maxVersions: 2, casRequired: true, deleteVersionAfter: undefined });
      await assert.rejects(kv.write('needs-cas', { a: 1 }), (e: unknown) => e instanceof SecretsError && e.status === 400);
      await kv.write('needs-cas', { a: 1 }, { cas: 0 });
    });

    it('patch merges (null removes a key) and needs the key to exist', async () => {
      const kv = client().kv('secret');
      await kv.write('cfg', { a: '1', b: '2' });
      const patched = await kv.patch('cfg', { b: null, c: '3' });
      assert.equal(patched.metadata?.version, 2);
      assert.deepEqual((await kv.read('cfg')).data, { a: '1', c: '3' });
      await assert.rejects(kv.patch('absent', { a: 1 }), (e: unknown) => e instanceof SecretsError && e.status === 404);
    });

    it("SEC-STATUS-400: a check-and-set mismatch is a typed 400 with the service's message, not retried", async () => {
      const kv = client().kv('secret');
      await kv.write('cas', { v: 1 });
      const before = requestLog.length;
      const error = await kv.write('cas', { v: 2 }, { cas: 0 }).catch((e: unknown) => e);
      assert.ok(error instanceof SecretsError);
      assert.equal(error.status, 400);
      assert.match(error.errors.join(), /check-and-set parameter did not match the current version/);
      assert.equal(requestLog.length - before, 1);
    });

    it('concurrent writers with CAS: exactly one winner per version, verified by the version count', async () => {
      const kv = client().kv('secret');
      await kv.write('counter', { n: 0 });
      const writers = 8;
      const rounds = 4;
      let wins = 0;
      let losses = 0;
      for (let round = 0; round < rounds; round++) {
        const current = (await kv.read('counter')).metadata!.version;
        const results = await Promise.allSettled(Array.from({ length: writers }, (_, w) => kv.write('counter', { n: round + 1, writer: w }, { cas: current })));
        const won = results.filter((r) => r.status === 'fulfilled');
        assert.equal(won.length, 1, `round ${round}: exactly one writer wins`);
        for (const r of results) {
          if (r.status === 'rejected') {
            assert.ok(r.reason instanceof SecretsError && r.reason.status === 400, String(r.reason));
            losses++;
          }
        }
        wins += won.length;
        assert.equal((won[0] as PromiseFulfilledResult<{ metadata?: { version: number } }>).value.metadata?.version, current + 1);
      }
      const metadata = await kv.readMetadata('counter');
      assert.equal(metadata?.currentVersion, 1 + rounds);
      assert.equal(Object.keys(metadata!.versions).length, 1 + rounds);
      assert.equal(wins, rounds);
      assert.equal(losses, rounds * (writers - 1));
    });

    it('SEC-EP-LIST, SEC-LIST-EMPTY-404: list on metadata/, folders end in "/", an empty list is []', async () => {
      const kv = client().kv('secret');
      await kv.write('team/a', { v: 1 });
      await kv.write('team/b/c', { v: 1 });
      assert.deepEqual((await kv.list('team/')).sort(), ['a', 'b/']);
      assert.deepEqual(await kv.list('team/b'), ['c']);
      assert.deepEqual(await kv.list('nobody/'), []);
    });
  });

  describe('kv v1', () => {
    beforeEach(() => start());

    it('SEC-KV1-PATH, SEC-EP-WRITE: POST and PUT write <mount>/<name>; read, list and delete', async () => {
      const c = client();
      const kv = c.kv('kv');
      assert.equal(await kv.version(), 1);
      const written = await kv.write('app/token', { value: 'abc' });
      assert.equal(written.metadata, undefined);
      await c.kv('kv', { kvVersion: 1, writeMethod: 'PUT' }).write('app/other', { value: 'def' });
      assert.deepEqual((await kv.read('app/token')).data, { value: 'abc' });
      assert.deepEqual((await kv.read('app/other')).data, { value: 'def' });
      assert.deepEqual((await kv.list('app/')).sort(), ['other', 'token']);
      await kv.delete('app/token');
      assert.equal((await kv.read('app/token')).state, 'missing');
      await assert.rejects(kv.undelete('app/other', [1]), /needs a kv v2 mount/);
      await assert.rejects(kv.read('app/other', { version: 1 }), /keeps no versions/);
    });
  });

  describe('help', () => {
    beforeEach(() =>
      start({ users: [{ username: 'reader', password: 'pw-reader-1', policies: ['app'] }], policies: { app: { 'secret/data/app/*': ['read'] } } }),
    );

    it('SEC-EP-HELP, SEC-HELP-RESPONSE-SHAPE, SEC-HELP-OPENAPI-DOC: help is typed {help, openapi} with paths relative to the queried path', async () => {
      const help = await client().help('secret/');
      assert.equal(typeof help.help, 'string');
      assert.ok(help.help.length > 0);
      assert.equal(help.openapi.openapi, '3.0.2');
      const paths = Object.keys(help.openapi.paths);
      assert.ok(paths.includes('/config'), paths.join());
      assert.ok(
        paths.some((p) => p.startsWith('/data/')),
        paths.join(),
      );
      assert.ok(
        paths.every((p) => !p.startsWith('/secret')),
        'relative to the queried path',
      );
    });

    it('SEC-HELP-PERMISSION: help without permission on the path is a 403', async () => {
      const c = client({ token: undefined });
      await c.loginUserpass('reader', 'pw-reader-1');
      await assert.rejects(c.help('kv/'), (e: unknown) => e instanceof SecretsError && e.status === 403);
    });
  });

  describe('authentication', () => {
    const password = 'pw-canary-9d1e';
    beforeEach(() =>
      start({
        users: [{ username: 'deployer', password, policies: ['app'] }],
        approles: [{ roleName: 'ci', policies: ['app'] }],
        policies: { app: { 'secret/data/app/*': ['create', 'read', 'update'], 'secret/metadata/app/*': ['list', 'read'] } },
      }),
    );

    it('SEC-AUTH-LOGIN-NO-AUTH, SEC-AUTH-LOGIN-JSON, SEC-LOGIN-ENDPOINTS-PER-METHOD: userpass login with no token; the token is used afterwards', async () => {
      const c = client({ token: undefined });
      const info = await c.loginUserpass('deployer', password);
      assert.ok(info.policies.includes('app'));
      assert.ok(c.authenticated);
      const kv = c.kv('secret', { kvVersion: 2 });
      await kv.write('app/x', { v: '1' });
      assert.deepEqual((await kv.read('app/x')).data, { v: '1' });
      assert.ok(!requestLog.join('\n').includes(password));
    });

    it('SEC-AUTH-403, SEC-STATUS-403: no access to a path is a typed 403 (not retried)', async () => {
      const c = client({ token: undefined });
      await c.loginUserpass('deployer', password);
      const before = requestLog.length;
      await assert.rejects(c.kv('secret', { kvVersion: 2 }).read('other/x'), (e: unknown) => e instanceof SecretsError && e.status === 403 && e.attempts === 1);
      assert.equal(requestLog.length - before, 1);
    });

    it('SEC-WRITE-EXISTENCE-CHECK: with a create-only policy the first write (create) works and the second (update) is a typed 403', async () => {
      await server.stop();
      await start({ users: [{ username: 'creator', password, policies: ['create-only'] }], policies: { 'create-only': { 'secret/data/once/*': ['create'] } } });
      const c = client({ token: undefined });
      await c.loginUserpass('creator', password);
      const kv = c.kv('secret', { kvVersion: 2 });
      await kv.write('once/x', { v: 1 });
      await assert.rejects(kv.write('once/x', { v: 2 }), (e: unknown) => e instanceof SecretsError && e.status === 403);
    });

    it('approle login with role_id and secret_id', async () => {
      const role = server.approles.find((r) => r.roleName === 'ci')!;
      const c = client({ token: undefined });
      const info = await c.loginAppRole(role.roleId, role.secretId);
      assert.ok(info.policies.includes('app'));
      await c.kv('secret', { kvVersion: 2 }).write('app/from-ci', { v: 1 });
      await assert.rejects(
        client({ token: undefined }).loginAppRole(role.roleId, 'wrong-secret-id'),
        (e: unknown) => e instanceof SecretsError && (e.status === 400 || e.status === 403),
      );
    });

    it('token login checks the token (lookup-self) and renew-self renews it', async () => {
      const c = client({ token: undefined });
      await c.loginUserpass('deployer', password);
      const issued = c.revealToken()!;
      const other = client({ token: undefined });
      const info = await other.loginWithToken(issued);
      assert.ok(info.policies.includes('app'));
      assert.ok(info.ttl > 0);
      const renewed = await other.renewSelf();
      assert.ok(renewed.ttl > 0);
      assert.equal(other.revealToken(), issued);
    });

    it('SEC-AUTH-TOKEN-REQUIRED: a bad token is a 403 whose message never shows it, with a hint that the token may be wrong or lack a policy', async () => {
      const bad = 'bad-token-canary-51c2';
      const c = client({ token: bad });
      const error = await c
        .kv('secret', { kvVersion: 2 })
        .read('app/x')
        .catch((e: unknown) => e);
      assert.ok(error instanceof SecretsError);
      assert.equal(error.status, 403);
      assert.ok(!`${error.message} ${error.hint} ${error.stack}`.includes(bad));
      // Through mount detection (no kv version given), the hint still names the token, not only the mount.
      const detected = await c.kvAt('secret/app/x').catch((e: unknown) => e);
      assert.ok(detected instanceof SecretsError && detected.status === 403, String(detected));
      assert.match(detected.hint ?? '', /token is wrong, expired or lacks a policy/);
      await assert.rejects(client({ token: bad }).loginWithToken(bad), (e: unknown) => e instanceof SecretsError && e.status === 403);
    });

    it('SEC-AUTH-LOGIN-NO-AUTH: a password or secret id the service echoes in an error never reaches the message', async () => {
      const pw = 'echoed-password-7f31aa';
      const secretId = 'echoed-secret-id-0b94cc';
      server.setFaults([
        { method: 'POST', path: '/v1/auth/userpass/login/*', status: 400, count: 1, errors: [`invalid password ${pw} for deployer`] },
        { method: 'POST', path: '/v1/auth/approle/login', status: 400, count: 1, errors: [`secret id ${secretId} is not valid`] },
      ]);
      const c = client({ token: undefined });
      for (const [attempt, canary] of [
        [() => c.loginUserpass('deployer', pw), pw],
        [() => c.loginAppRole('role-x', secretId), secretId],
      ] as const) {
        const error = await attempt().catch((e: unknown) => e);
        assert.ok(error instanceof SecretsError && error.status === 400, String(error));
        assert.match(error.message, /\[REDACTED\]/);
        assert.ok(!`${error.message} ${error.errors.join(' ')} ${error.stack}`.includes(canary), error.message);
      }
    });

    it('SEC-AUTH-TOKEN-REQUIRED: with no token, kv calls and token lookups are refused before sending (usage error, exit 2)', async () => {
      const c = client({ token: undefined });
      const before = requestLog.length;
      for (const attempt of [() => c.kv('secret', { kvVersion: 2 }).read('app/x'), () => c.kvAt('secret/app/x'), () => c.lookupSelf()]) {
        await assert.rejects(attempt(), (e: unknown) => {
          assert.ok(e instanceof SecretsNoTokenError, String(e));
          assert.equal(e.exitCode, 2);
          assert.match(e.message, /^no token for .*; nothing was sent$/);
          // The library's hint speaks of the option and the login methods; the command's of SECRETS_TOKEN and `gantry secrets login`.
          assert.match(e.hint ?? '', /the `token` option of SecretsClient, SECRETS_TOKEN, or in a Pulumi program gantry:secretsToken/);
          assert.match(e.cliHint, /export SECRETS_TOKEN=<token>.*`gantry secrets login userpass --username <name>`/);
          return true;
        });
      }
      assert.equal(requestLog.length, before, 'nothing was sent');
      c.setToken('');
      await assert.rejects(c.kv('secret', { kvVersion: 2 }).read('app/x'), SecretsNoTokenError);
    });

    it('SEC-AUTH-LOGIN-NO-AUTH: a wrong password or AppRole secret id is a 403 with a login hint, not one about the token', async () => {
      const c = client({ token: undefined });
      const role = server.approles.find((r) => r.roleName === 'ci')!;
      for (const attempt of [() => c.loginUserpass('deployer', 'wrong-password-1'), () => c.loginAppRole(role.roleId, 'wrong-secret-id-1')]) {
        await assert.rejects(attempt(), (e: unknown) => {
          assert.ok(e instanceof SecretsError && e.status === 403, String(e));
          assert.match(e.hint ?? '', /^The login was refused: check the username and password \(userpass\) or the role id and secret id \(approle\)/);
          assert.doesNotMatch(e.hint ?? '', /token/i);
          return true;
        });
      }
    });

    it('SEC-AUTH-BEARER, SEC-AUTH-TOKEN-HEADER: the service accepts the token in either header', async () => {
      await client({ tokenHeader: 'authorization' }).kv('secret').write('bearer', { v: 1 });
      assert.deepEqual((await client().kv('secret').read('bearer')).data, { v: 1 });
    });
  });

  describe('proxy request header', () => {
    beforeEach(() => start({ requireRequestHeader: true }));

    it('SEC-AUTH-PROXY-REQUEST-HEADER, SEC-AUTH-CLIENTS-SEND-REQUEST-HEADER: the client always sends X-Secrets-Request, so a require_request_header listener accepts it', async () => {
      await client().kv('secret').write('proxied', { v: 1 });
      const raw = await fetch(`${server.url}/v1/secret/data/proxied`, { headers: { 'x-secrets-token': server.rootToken } });
      // As Vault's listener with require_request_header: 412 Precondition Failed, naming the missing header.
      assert.equal(raw.status, 412, `a request without the header is refused with 412 (got ${raw.status})`);
      assert.deepEqual(await raw.json(), { errors: ['missing "X-Secrets-Request" header'] });
      const wrongValue = await fetch(`${server.url}/v1/secret/data/proxied`, {
        headers: { 'x-secrets-token': server.rootToken, 'x-secrets-request': 'false' },
      });
      assert.equal(wrongValue.status, 412, 'only the value true is accepted');
      await wrongValue.body?.cancel();
    });
  });

  describe('namespaces', () => {
    beforeEach(() => start({ namespaces: ['ns1', 'ns1/ns2'] }));

    it('SEC-NS-RELATIVE, SEC-NS-EQUIVALENCE, SEC-NS-SPLIT-PREFIX: header ns1/ns2/ + secret/foo, path ns1/ns2/secret/foo and every split are the same secret', async () => {
      await client({ namespace: 'ns1/ns2' }).kv('secret').write('foo', { where: 'ns2' });
      for (let split = 0; split <= 2; split++) {
        const { namespace, path } = resplit('ns1/ns2/', 'secret/', split);
        const c = client(namespace ? { namespace } : {});
        const kv = c.kv(path, { kvVersion: 2 });
        const read = await kv.read('foo');
        assert.equal(read.data?.where, 'ns2', `split ${split}: namespace ${namespace} mount ${path}`);
        assert.equal(read.metadata?.version, split + 1, "each split sees the previous split's write");
        await kv.write('foo', { where: 'ns2', split });
      }
      const metadata = await client({ namespace: 'ns1/ns2/' }).kv('secret').readMetadata('foo');
      assert.equal(metadata?.currentVersion, 4, 'one secret, written once per split');
      // Mount detection works with the namespace in the header (the namespace setting).
      const { kv, name } = await client({ namespace: 'ns1/ns2' }).kvAt('secret/foo');
      assert.equal(name, 'foo');
      assert.equal(await kv.version(), 2);
      // The client can put the namespace in front of the path instead of the header: the same request.
      const before = requestLog.length;
      const inPath = await client({ namespace: '/ns1//ns2', namespaceIn: 'path' }).kvAt('secret/foo');
      assert.equal((await inPath.kv.read(inPath.name)).data?.where, 'ns2');
      assert.deepEqual(requestLog.slice(before), ['GET /v1/ns1/ns2/sys/internal/ui/mounts/secret/foo 200', 'GET /v1/ns1/ns2/secret/data/foo 200']);
      // A resource namespace is relative to the client's.
      assert.equal((await client({ namespace: 'ns1' }).kv('secret', { namespace: 'ns2' }).read('foo')).data?.where, 'ns2');
      // The root namespace's secret/ is another mount.
      assert.equal((await client().kv('secret').read('foo')).state, 'missing');
    });

    it('SEC-NS-ENDPOINT-SCOPE, SEC-STATUS-404: a namespace that does not exist is a 404 naming the route, not the root namespace', async () => {
      await client().kv('secret', { kvVersion: 2 }).write('foo', { where: 'root' });
      const before = requestLog.length;
      const error = await client({ namespace: 'nope' })
        .kv('secret', { kvVersion: 2 })
        .read('foo')
        .catch((e: unknown) => e);
      assert.ok(error instanceof SecretsError, String(error));
      assert.equal(error.status, 404);
      assert.deepEqual(error.errors, ['no handler for route "nope/secret/data/foo". route entry not found.']);
      assert.equal(
        error.message,
        'secrets service answered 404 to GET /v1/secret/data/foo: no handler for route "nope/secret/data/foo". route entry not found.',
      );
      assert.equal(error.attempts, 1, 'a 404 is not retried');
      assert.deepEqual(requestLog.slice(before), ['GET /v1/secret/data/foo 404'], 'one request, the namespace in the header');
    });
  });

  describe('faults', () => {
    it('SEC-STATUS-412: 412 then success', async () => {
      await start({ faults: [{ method: 'GET', path: '/v1/secret/data/*', status: 412, count: 1 }] });
      const kv = client().kv('secret', { kvVersion: 2 });
      await kv.write('consistent', { v: 1 });
      const before = requestLog.length;
      assert.deepEqual((await kv.read('consistent')).data, { v: 1 });
      assert.equal(requestLog.length - before, 2, requestLog.slice(before).join('\n'));
    });

    it('SEC-STATUS-429, SEC-STATUS-502: retried, then the retry succeeds', async () => {
      await start({
        faults: [
          { path: '/v1/secret/data/*', status: 429, count: 1 },
          { path: '/v1/secret/data/*', status: 502, count: 1 },
        ],
      });
      await client().kv('secret', { kvVersion: 2 }).write('flaky', { v: 1 });
      const metadata = await client().kv('secret', { kvVersion: 2 }).readMetadata('flaky');
      assert.equal(metadata?.currentVersion, 1, 'the write was applied once');
    });

    it('SEC-STATE-SEALED-503, SEC-STATUS-503: writes during a sealed window are each applied exactly once, or fail clearly', async () => {
      await start();
      const c = client({ maxRetries: 4, retryWaitMinMs: 100, retryWaitMaxMs: 150 });
      const kv = c.kv('secret', { kvVersion: 2 });
      const writes = 20;
      const outcomes: Array<'ok' | 'failed'> = [];
      let unsealed: Promise<void> | undefined;
      const running = (async () => {
        for (let i = 0; i < writes; i++) {
          // The service seals itself between two writes (deterministic, however loaded the machine), for 400 ms.
          if (i === 5) {
            server.seal();
            unsealed = new Promise((resolve) =>
              setTimeout(() => {
                server.unseal();
                resolve();
              }, 400),
            );
          }
          try {
            await kv.write(`sealed/k${i}`, { i });
            outcomes[i] = 'ok';
          } catch (error) {
            assert.ok(error instanceof SecretsError && error.status === 503, String(error));
            assert.match(error.hint ?? '', /sealed/);
            outcomes[i] = 'failed';
          }
        }
      })();
      await running;
      await unsealed;
      assert.ok(
        requestLog.some((l) => l === 'POST /v1/secret/data/sealed/k5 503'),
        'write 5 met the sealed service',
      );
      assert.equal(outcomes[5], 'ok', 'write 5 was retried until the service was unsealed');
      for (let i = 0; i < writes; i++) {
        const metadata = await kv.readMetadata(`sealed/k${i}`);
        if (outcomes[i] === 'ok') assert.equal(metadata?.currentVersion, 1, `k${i} written exactly once`);
        else assert.equal(metadata, undefined, `k${i} failed and was not written`);
      }
      // With no retries left the failure is clear.
      server.seal();
      const error = await client({ maxRetries: 1 })
        .kv('secret', { kvVersion: 2 })
        .write('sealed/late', { v: 1 })
        .catch((e: unknown) => e);
      assert.ok(error instanceof SecretsError && error.status === 503 && error.attempts === 2, String(error));
      server.unseal();
    });

    it('SEC-STATUS-413, SEC-LIMIT-REQUEST-SIZE: a body over the listener limit (client limit raised) is a typed 413, not retried', async () => {
      await start({ maxRequestSize: 64 * 1024 });
      const c = client({ limits: { maxRequestBytes: 1024 * 1024 } });
      const before = requestLog.length;
      await assert.rejects(
        c.kv('secret', { kvVersion: 2 }).write('big', { v: 'x'.repeat(100_000) }),
        (e: unknown) => e instanceof SecretsError && e.status === 413 && e.attempts === 1,
      );
      assert.ok(requestLog.length - before <= 1);
      // With the default client limits, the same body over 32 MB never leaves.
      await assert.rejects(
        client()
          .kv('secret', { kvVersion: 2 })
          .write('huge', Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, 'x'.repeat(1_048_576)]))),
        SecretsLimitError,
      );
    });

    it('a missing mount: detection says which mount and how to skip detection; an explicit version gets the 404 "no handler"', async () => {
      await start();
      const detect = await client()
        .kvAt('nomount/app')
        .catch((e: unknown) => e);
      assert.ok(detect instanceof SecretsError, String(detect));
      assert.equal(detect.code, 'SECRETS_MOUNT_UNKNOWN');
      assert.match(detect.hint ?? '', /client\.mounts\(\).*pass kvVersion/);
      assert.match(detect.cliHint ?? '', /`gantry secrets mounts`.*--kv-version 1\|2/);
      const explicit = await client()
        .kv('nomount', { kvVersion: 2 })
        .read('app')
        .catch((e: unknown) => e);
      assert.ok(explicit instanceof SecretsError && explicit.status === 404, String(explicit));
      assert.ok(explicit.errors.length > 0);
    });

    it('the server killed mid-write: a clear client error that says the write may have been applied; the data file stays whole', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'gantry-secrets-kill-'));
      const dataFile = join(dir, 'data.json');
      const kept = `kept-before-kill-${Math.random().toString(36).slice(2)}`;
      const halfDone = `half-done-at-kill-${Math.random().toString(36).slice(2)}`;
      const child = await startServerProcess({ dataFile, faults: [{ method: 'POST', path: '/v1/secret/data/slow', latencyMs: 20_000 }] });
      const c = clientOf(child);
      try {
        const kv = c.kv('secret', { kvVersion: 2 });
        await kv.write('before', { v: kept });
        const pending = kv.write('slow', { v: halfDone }).catch((e: unknown) => e);
        // The server holds the write for 20 s; a second is ample for it to arrive on a loaded machine.
        await new Promise((r) => setTimeout(r, 1000));
        await child.kill('SIGKILL');
        const error = await pending;
        assert.ok(error instanceof SecretsConnectionError, String(error));
        assert.equal(error.maybeApplied, true);
        assert.match(error.message, /POST \/v1\/secret\/data\/slow/);
        assert.match(error.message, /read it back/);
        // The next call finds nobody: retried (nothing was sent), then a clear error.
        const refused = await kv.read('before').catch((e: unknown) => e);
        assert.ok(refused instanceof SecretsConnectionError && refused.errno === 'ECONNREFUSED', String(refused));
        // The file on disk is the state after the acknowledged write and before the held one: whole JSON, the
        // earlier value in it, no trace of the held write, and no temporary left (no save was under way).
        const text = await readFile(dataFile, 'utf8');
        const saved = JSON.parse(text) as PersistedState;
        assert.equal(saved.format, 'gantry-secrets-devserver');
        const secretMount = saved.namespaces['']!.mounts['secret/']!;
        assert.deepEqual(Object.keys(secretMount.v2), ['before']);
        assert.equal(secretMount.v2.before!.current_version, 1);
        assert.deepEqual(Object.keys(secretMount.v2.before!.versions), ['1']);
        assert.deepEqual(secretMount.v2.before!.versions['1']!.data, { v: kept });
        assert.ok(text.includes(kept), 'the value written before the kill is on disk');
        assert.ok(!text.includes(halfDone), 'the held write left no trace in the data file');
        assert.deepEqual(await readdir(dir), ['data.json']);
        // A server started on the file serves exactly that.
        await afterRestart(dataFile, async (again) => {
          const read = await again.read('before');
          assert.deepEqual(read.data, { v: kept });
          assert.equal(read.metadata?.version, 1);
          assert.equal((await again.read('slow')).state, 'missing');
        });
      } finally {
        await child.kill();
        await rm(dir, { recursive: true, force: true });
      }
      server = await startSecretsServer();
    });

    it('the server killed (SIGKILL) during a burst of concurrent writes: the data file is whole JSON holding every acknowledged write, at most the in-flight ones besides, each exactly as sent', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'gantry-secrets-burst-'));
      const dataFile = join(dir, 'data.json');
      const tag = `burst-${Math.random().toString(36).slice(2)}`;
      const child = await startServerProcess({ dataFile });
      const c = clientOf(child);
      try {
        const kv = c.kv('secret', { kvVersion: 2 });
        const writers = 8;
        const killAfter = 12;
        // Killed in the second or third round of writes, while the server is saving the ones after it.
        // Each value is large enough that a save of the growing state takes a while, so the kill lands among saves.
        const value = (w: number, i: number) => ({ canary: `${tag}-w${w}-i${i}`, pad: `${w}.${i}.`.padEnd(40_000, 'x') });
        const acknowledged: number[] = Array.from({ length: writers }, () => 0);
        const failures: Array<{ w: number; i: number; error: unknown }> = [];
        let acks = 0;
        let killing: Promise<void> | undefined;
        const writer = async (w: number) => {
          for (let i = 0; ; i++) {
            let written;
            try {
              written = await kv.write(`burst/w${w}-i${i}`, value(w, i));
            } catch (error) {
              failures.push({ w, i, error });
              return;
            }
            assert.equal(written.metadata?.version, 1);
            acknowledged[w] = i + 1;
            if (++acks >= killAfter) killing ??= child.kill('SIGKILL');
          }
        };
        await Promise.all(Array.from({ length: writers }, (_, w) => writer(w)));
        await killing;
        assert.ok(acks >= killAfter, `${acks} writes were acknowledged before the kill`);
        assert.equal(failures.length, writers, 'every writer ended with the one write the kill interrupted');
        for (const { w, i, error } of failures) {
          assert.ok(error instanceof SecretsConnectionError, `w${w} i${i}: ${String(error)}`);
          assert.match(error.message, new RegExp(`POST /v1/secret/data/burst/w${w}-i${i}`));
          if (error.maybeApplied) assert.match(error.message, /read it back/);
        }

        const text = await readFile(dataFile, 'utf8');
        const saved = JSON.parse(text) as PersistedState;
        assert.equal(saved.format, 'gantry-secrets-devserver');
        const stored = saved.namespaces['']!.mounts['secret/']!.v2;
        const expected = new Set<string>();
        for (let w = 0; w < writers; w++) {
          // Writer w's writes are sequential: 0 .. acknowledged-1 were acknowledged, the next one failed.
          for (let i = 0; i < acknowledged[w]!; i++) expected.add(`burst/w${w}-i${i}`);
        }
        const unacknowledged = new Set(failures.filter((f) => (f.error as SecretsConnectionError).maybeApplied).map((f) => `burst/w${f.w}-i${f.i}`));
        for (const key of expected) assert.ok(key in stored, `the acknowledged write ${key} is in the data file`);
        for (const key of Object.keys(stored)) {
          assert.ok(
            expected.has(key) || unacknowledged.has(key),
            `${key} in the data file is an acknowledged write or one the kill interrupted after it was sent`,
          );
          const [, w, i] = /^burst\/w(\d+)-i(\d+)$/.exec(key)!;
          const record = stored[key]!;
          assert.equal(record.current_version, 1, `${key} written once`);
          assert.deepEqual(Object.keys(record.versions), ['1']);
          assert.deepEqual(record.versions['1']!.data, value(Number(w), Number(i)), `${key} holds exactly the value sent`);
        }
        const extra = Object.keys(stored).filter((k) => !expected.has(k));
        assert.ok(extra.length <= writers, `at most one interrupted write per writer is on disk besides the acknowledged ones (${extra.join(', ')})`);

        // A server started on the file serves every acknowledged write, and removes the dead process's temporaries.
        await afterRestart(dataFile, async (again) => {
          for (const key of expected) {
            const [, w, i] = /^burst\/w(\d+)-i(\d+)$/.exec(key)!;
            assert.deepEqual((await again.read(key)).data, value(Number(w), Number(i)), key);
          }
          assert.deepEqual(
            (await readdir(dir)).filter((n) => n.endsWith('.tmp')),
            [],
            'no temporary of the killed process is left',
          );
        });
      } finally {
        await child.kill();
        await rm(dir, { recursive: true, force: true });
      }
      server = await startSecretsServer();
    });
  });

  describe('TLS', () => {
    let pki: TestPki;
    before(() => {
      pki = makeTestPki(['localhost', '127.0.0.1', 'secrets.internal']);
    });
    after(() => pki.remove());

    it('SEC-AUTH-TLS: an https address of the plain-http dev server fails at once, with a hint naming the http:// address', async () => {
      await start();
      const { host } = new URL(server.url);
      const started = Date.now();
      const error = await client({ address: `https://${host}` })
        .kv('secret', { kvVersion: 2 })
        .read('x')
        .catch((e: unknown) => e);
      assert.ok(error instanceof SecretsConnectionError, String(error));
      assert.equal(error.attempts, 1, 'a protocol mismatch is not retried');
      assert.ok(Date.now() - started < 5000, 'no hang');
      assert.equal(
        error.hint,
        `The service at ${host} speaks plain http, not TLS: set the address (the \`address\` option, SECRETS_ADDR or gantry:secretsAddr) to http://${host}.`,
      );
      assert.equal(
        error.cliHint,
        `The service at ${host} speaks plain http, not TLS: set the address (SECRETS_ADDR, or --address in gantry secrets) to http://${host}.`,
      );
    });

    it('SEC-AUTH-TLS: verified against a CA made in the test; a server name override; skip-verify works and an unknown CA fails clearly', async () => {
      await start({ tls: { cert: pki.cert, key: pki.key } });
      assert.match(server.url, /^https:/);
      await client({ caCert: pki.caFile }).kv('secret').write('tls', { v: 1 });
      assert.deepEqual((await client({ caCert: pki.caFile, tlsServerName: 'secrets.internal' }).kv('secret').read('tls')).data, { v: 1 });
      const untrusted = await client({ caCert: pki.otherCaFile })
        .kv('secret', { kvVersion: 2 })
        .read('tls')
        .catch((e: unknown) => e);
      assert.ok(untrusted instanceof SecretsConnectionError, String(untrusted));
      assert.equal(untrusted.attempts, 1, 'a certificate error is not retried');
      assert.match(untrusted.message, /certificate|self.signed|issuer/i);
      const wrongName = await client({ caCert: pki.caFile, tlsServerName: 'other.name' })
        .kv('secret', { kvVersion: 2 })
        .read('tls')
        .catch((e: unknown) => e);
      assert.ok(wrongName instanceof SecretsConnectionError, String(wrongName));
      assert.deepEqual((await client({ skipVerify: true }).kv('secret', { kvVersion: 2 }).read('tls')).data, { v: 1 });
    });
  });
});
