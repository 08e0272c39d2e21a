// The kv engine store against the embedded secrets server (real sockets), through lib/secrets' own client.
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { startSecretsServer, type SecretsServer } from '../../../devserver/secrets/index.js';
import { createLogger, setLogger } from '../../../lib/log.js';
import { redact } from '../../../lib/redact.js';
import { SecretsClient, SecretsError } from '../../../lib/secrets/index.js';
import { KvTokenStore, profileKey, type KvLike } from '../../../lib/auth/store/index.js';
import { assertNoCanary, canaries, makeLogin, type Canaries } from './helpers/logins.js';

describe('auth token store: kv engine (embedded secrets server)', function () {
  this.timeout(30_000);
  let server: SecretsServer;
  const requestLog: string[] = [];
  const logs: string[] = [];
  const used: Canaries[] = [];
  const clients: SecretsClient[] = [];
  const key = profileKey({ authUrl: 'https://auth.example:443/', clientId: 'client-a', profile: 'default' });

  function client(token?: string): SecretsClient & KvLike {
    const c = new SecretsClient({
      address: server.url,
      token: token ?? server.rootToken,
      retryWaitMinMs: 10,
      retryWaitMaxMs: 20,
      maxRetries: 0,
      sources: { env: {}, pulumi: undefined },
    });
    clients.push(c);
    return c;
  }
  function tokens(tag: string): Canaries {
    const t = canaries(tag);
    used.push(t);
    return t;
  }

  before(async () => {
    server = await startSecretsServer({ log: (line) => requestLog.push(line) });
    setLogger(createLogger({ level: 'debug', write: (line) => logs.push(line) }));
  });
  after(async () => {
    setLogger(createLogger());
    for (const c of clients) c.close();
    await server?.stop();
    for (const t of used) assertNoCanary(t, [...logs, ...requestLog], 'a log line');
  });

  it("DEV-AUTH-REFRESH-REUSE: keeps the login's fields as one kv v2 secret (tokens in the secret data), read back whole by a new client", async () => {
    const t = tokens('kv');
    const login = makeLogin(key, t);
    const store = new KvTokenStore(client(), 'secret/gantry/auth/default');
    assert.equal(store.kind, 'kv');
    assert.equal(store.spec, 'kv:secret/gantry/auth/default');
    await store.write(login);
    const raw = await client().kv('secret').read('gantry/auth/default');
    assert.equal(raw.state, 'current');
    assert.equal(raw.data?.format, 'gantry-auth-login/1');
    assert.equal(raw.data?.authUrl, 'https://auth.example');
    assert.equal((raw.data?.tokens as Record<string, unknown>).refreshToken, t.refresh);
    const again = await new KvTokenStore(client(), 'secret/gantry/auth/default').read(key);
    assert.ok(again);
    assert.deepEqual({ ...again, tokens: { ...again.tokens } }, login);
    assertNoCanary(t, [JSON.stringify(again), inspect(again), store.location, store.describe(key), JSON.stringify(store)], 'a logged login or the location');
    // Every token a store reads or writes is known to the redactor: no message that quotes one by mistake shows it.
    assertNoCanary(t, [redact(`refresh failed for ${t.refresh} (access ${t.access}, id ${t.id})`)], 'a redacted message');
  });

  it('keeps one version on kv v2 (old refresh tokens do not linger in the history), and logout deletes every version with the metadata', async () => {
    const store = new KvTokenStore(client(), 'secret/gantry/auth/versions');
    const versionsKey = { ...key, profile: 'versions' };
    for (const tag of ['v1', 'v2', 'v3']) await store.write(makeLogin(versionsKey, tokens(tag)));
    const metadata = await client().kv('secret').readMetadata('gantry/auth/versions');
    assert.ok(metadata);
    assert.equal(metadata.maxVersions, 1);
    assert.equal(Object.keys(metadata.versions).length, 1);
    assert.equal(await store.delete(versionsKey), true);
    assert.equal(await client().kv('secret').readMetadata('gantry/auth/versions'), undefined);
    assert.equal(await store.delete(versionsKey), false);
    assert.equal(await store.read(versionsKey), undefined);
  });

  it('works on a kv v1 mount too (kv:kv/…)', async () => {
    const store = new KvTokenStore(client(), 'kv/team/gantry-login');
    const t = tokens('v1mount');
    await store.write(makeLogin(key, t));
    assert.equal((await store.read(key))?.tokens.accessToken, t.access);
    assert.equal(await store.delete(key), true);
    assert.equal(await store.read(key), undefined);
  });

  it("refuses to mix accounts: the same path holding another server's or client's login is neither read as this one, overwritten nor deleted", async () => {
    const store = new KvTokenStore(client(), 'secret/gantry/auth/shared');
    const first = profileKey({ authUrl: 'https://auth.example', clientId: 'client-a', profile: 'shared' });
    const t = tokens('first');
    await store.write(makeLogin(first, t));
    for (const other of [
      profileKey({ authUrl: 'https://other.example', clientId: 'client-a', profile: 'shared' }),
      profileKey({ authUrl: 'https://auth.example', clientId: 'client-b', profile: 'shared' }),
    ]) {
      const expected = {
        code: 'AUTH_STORE_MISMATCH',
        exitCode: 2,
        message: new RegExp(
          `the kv secret secret/gantry/auth/shared holds the login of profile shared at https://auth\\.example \\(client client-a\\), not of profile shared at ${other.authUrl.replace(/\./g, '\\.')}`,
        ),
      };
      await assert.rejects(store.read(other), expected);
      await assert.rejects(store.write(makeLogin(other, tokens('second'))), expected);
      await assert.rejects(store.delete(other), expected);
    }
    assert.equal((await store.read(first))?.tokens.refreshToken, t.refresh);
  });

  it("a service error (a token without access: 403) comes through as the secrets client's error, with no token value in it", async () => {
    const t = tokens('denied');
    const store = new KvTokenStore(client('not-a-valid-token'), 'secret/gantry/auth/denied');
    const error = await store.write(makeLogin(key, t)).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(error instanceof SecretsError, String(error));
    assert.equal(error.exitCode, 1);
    assertNoCanary(t, [error.message, error.hint, error.stack], 'the error');
  });

  it('a kv secret that holds something else is refused with the field named, not its value', async () => {
    await client().kv('secret').write('gantry/auth/junk', { password: 'CANARY-NOT-A-LOGIN-value' });
    const store = new KvTokenStore(client(), 'secret/gantry/auth/junk');
    await assert.rejects(store.read(key), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'AUTH_STORE_CORRUPT');
      assert.match(error.message, /the kv secret secret\/gantry\/auth\/junk holds no usable Gantry login: it has no format marker/);
      assert.doesNotMatch(error.message, /CANARY/);
      return true;
    });
  });
});
