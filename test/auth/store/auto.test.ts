// Choosing where tokens go when no keyring is reachable: the kv engine when one is configured, a plain-text file only
// with --insecure-storage, otherwise a usage error that says why and the three ways out. The keyring probe runs in
// this process: it reads DBUS_SESSION_BUS_ADDRESS on every call and never reaches the binding when the bus fails.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSecretsServer, type SecretsServer } from '../../../devserver/secrets/index.js';
import { SecretsClient } from '../../../lib/secrets/index.js';
import { UsageError } from '../../../lib/errors.js';
import { openTokenStore, parseStoreSpec, profileKey, type KvLike } from '../../../lib/auth/store/index.js';
import { assertNoCanary, canaries, makeLogin } from './helpers/logins.js';

describe('auth token store: auto mode without a reachable keyring', function () {
  this.timeout(30_000);
  let server: SecretsServer;
  let configDir: string;
  const saved = { DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS, XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR };
  const clients: SecretsClient[] = [];
  const kv = async (): Promise<KvLike> => {
    const client = new SecretsClient({ address: server.url, token: server.rootToken, sources: { env: {}, pulumi: undefined } });
    clients.push(client);
    return client;
  };

  before(async () => {
    server = await startSecretsServer({});
  });
  after(async () => {
    await server?.stop();
  });
  beforeEach(() => {
    configDir = mkdtempSync(join(tmpdir(), 'gantry-auth-auto-'));
    // A bus address pointing nowhere: what a shell over SSH with a stale variable has.
    process.env.DBUS_SESSION_BUS_ADDRESS = `unix:path=${join(configDir, 'no-bus-here')}`;
    delete process.env.XDG_RUNTIME_DIR;
  });
  afterEach(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    for (const client of clients.splice(0)) client.close();
    rmSync(configDir, { recursive: true, force: true });
  });

  it('falls back to the kv engine at secret/gantry/auth/<profile> when options.kv() gives a client, says why, and the login round-trips there (DEV-AUTH-REFRESH-REUSE)', async () => {
    const opened = await openTokenStore(undefined, { configDir, profile: 'ci', kv });
    assert.equal(opened.store.kind, 'kv');
    assert.equal(opened.store.spec, 'kv:secret/gantry/auth/ci');
    assert.equal(opened.store.location, `kv engine secret/gantry/auth/ci at ${server.url}`);
    assert.match(opened.fallbackReason ?? '', /^the OS keyring is not reachable: the D-Bus session bus at .*no-bus-here cannot be used \(ENOENT\)$/);
    assert.equal(opened.warning, undefined);
    const key = profileKey({ authUrl: 'http://127.0.0.1:5762', clientId: 'client-a', profile: 'ci' });
    const tokens = canaries('auto');
    const login = makeLogin(key, tokens);
    await opened.store.write(login);
    assert.deepEqual({ ...(await opened.store.read(key))!, tokens: { ...(await opened.store.read(key))!.tokens } }, login);
    assertNoCanary(tokens, [opened.store.location, opened.fallbackReason, opened.store.describe(key), JSON.stringify(opened.store)], "the store's description");
  });

  it("then refuses a plain-text file without insecureStorage: a usage error (exit 2) with the keyring's reason and the three ways out; nothing written", async () => {
    const refused = await openTokenStore(undefined, { configDir, kv: async () => undefined }).then(
      () => undefined,
      (error: unknown) => error,
    );
    assert.ok(refused instanceof UsageError, String(refused));
    assert.equal(refused.exitCode, 2);
    assert.equal(refused.code, 'AUTH_NO_SAFE_STORE');
    assert.match(
      refused.message,
      /no safe place for the tokens: the OS keyring is not reachable: the D-Bus session bus at .*no-bus-here cannot be used \(ENOENT\), and no kv engine is configured \(SECRETS_ADDR is not set\)/,
    );
    // The library's hint names its options and the environment, never the command's flags (LIB-CLI-SAME-SETTINGS).
    assert.match(
      refused.hint ?? '',
      /set SECRETS_ADDR and SECRETS_TOKEN, to keep them in Gantry's kv engine at secret\/gantry\/auth\/default \(or store: 'kv:<mount>\/<path>'\)/,
    );
    assert.match(refused.hint ?? '', /store: 'file' or insecureStorage: true/);
    assert.doesNotMatch(refused.hint ?? '', /--store|--insecure/);
    assert.match(refused.hint ?? '', /start a keyring/);
    assert.equal(existsSync(join(configDir, 'auth')), false);
    // Without a kv factory at all, the same.
    await assert.rejects(openTokenStore(undefined, { configDir }), { code: 'AUTH_NO_SAFE_STORE' });
  });

  it('with insecureStorage, the last resort is the file, never silently: the reason and a plain-text warning come back', async () => {
    const opened = await openTokenStore(undefined, { configDir, insecureStorage: true });
    assert.equal(opened.store.kind, 'file');
    assert.match(opened.fallbackReason ?? '', /OS keyring is not reachable/);
    assert.match(opened.warning ?? '', /plain text in .*\/auth \(mode 0600.*insecureStorage: true allows it/);
  });

  it('insecureStorage does not pass over a configured kv engine', async () => {
    const opened = await openTokenStore(undefined, { configDir, insecureStorage: true, kv });
    assert.equal(opened.store.kind, 'kv');
  });

  it('--store file given explicitly is allowed, with a warning to print and no fallback reason', async () => {
    const opened = await openTokenStore('file', { configDir });
    assert.equal(opened.store.kind, 'file');
    assert.equal(opened.fallbackReason, undefined);
    assert.match(opened.warning ?? '', /plain text .* because store: 'file' asks for it/);
    assert.equal(opened.store.location, `${join(configDir, 'auth')} (plain-text files, mode 0600)`);
  });

  it('--store keyring when the keyring is not reachable is an error, not a fallback the user did not ask for', async () => {
    await assert.rejects(openTokenStore('keyring', { configDir, kv, insecureStorage: true }), (error: UsageError) => {
      assert.equal(error.code, 'AUTH_KEYRING_UNREACHABLE');
      assert.equal(error.exitCode, 2);
      assert.match(error.message, /store: 'keyring': the OS keyring is not reachable: the D-Bus session bus/);
      return true;
    });
  });

  it('no DBUS_SESSION_BUS_ADDRESS (and no $XDG_RUNTIME_DIR/bus): the reason says so', async () => {
    delete process.env.DBUS_SESSION_BUS_ADDRESS;
    const opened = await openTokenStore(undefined, { configDir, kv });
    assert.match(opened.fallbackReason ?? '', /no D-Bus session bus: DBUS_SESSION_BUS_ADDRESS is not set/);
  });

  it("a bus that accepts connections but never answers (where the binding itself would wait forever) counts as unreachable after the probe's deadline", async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => {
      sockets.add(socket);
    });
    const path = join(configDir, 'silent-bus');
    await new Promise<void>((resolve) => silent.listen(path, resolve));
    try {
      process.env.DBUS_SESSION_BUS_ADDRESS = `unix:path=${path},guid=0123456789abcdef0123456789abcdef`;
      const started = Date.now();
      const opened = await openTokenStore(undefined, { configDir, kv, keyringProbeTimeoutMs: 400 });
      const took = Date.now() - started;
      assert.equal(opened.store.kind, 'kv');
      assert.match(opened.fallbackReason ?? '', /cannot be used \(no answer within 400 ms while authenticating\)/);
      assert.ok(took < 3000, `took ${took} ms`);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('--store kv:<mount>/<path> needs a kv client; malformed specs are usage errors naming the accepted forms', async () => {
    await assert.rejects(openTokenStore('kv:secret/team/tokens', { configDir, kv: async () => undefined }), { code: 'AUTH_KV_NOT_CONFIGURED', exitCode: 2 });
    const opened = await openTokenStore('kv:/secret/team/tokens/', { configDir, kv });
    assert.equal(opened.store.spec, 'kv:secret/team/tokens');
    assert.deepEqual(parseStoreSpec('kv'), { kind: 'kv', path: undefined });
    assert.equal((await openTokenStore('kv', { configDir, kv, profile: 'p1' })).store.spec, 'kv:secret/gantry/auth/p1');
    for (const bad of ['vault', 'kv:secret', 'kv:secret/../x', 'kv:secret//x', '', 'KEYRING']) {
      await assert.rejects(openTokenStore(bad, { configDir, kv }), { code: 'AUTH_STORE_SPEC', exitCode: 2 }, bad);
    }
    await assert.rejects(openTokenStore(undefined, { configDir, kv, profile: '../etc' }), { code: 'AUTH_PROFILE', exitCode: 2 });
    assert.deepEqual(
      readdirSync(configDir).filter((name) => name === 'auth'),
      [],
    );
  });
});
