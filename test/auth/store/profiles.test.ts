// The profile index (which store holds which login, never a token) and dropping every login of an account when a
// security event says its sessions or tokens were revoked or the account disabled.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSecretsServer, type SecretsServer } from '../../../devserver/secrets/index.js';
import { createLogger, setLogger } from '../../../lib/log.js';
import { SecretsClient } from '../../../lib/secrets/index.js';
import {
  FileTokenStore,
  KvTokenStore,
  deleteLogin,
  dropAccountLogins,
  findProfile,
  forgetProfile,
  listProfiles,
  openStoreFor,
  profileIndexPath,
  profileKey,
  recordProfile,
  saveLogin,
  type KvLike,
} from '../../../lib/auth/store/index.js';
import { assertNoCanary, canaries, makeLogin, type Canaries } from './helpers/logins.js';

describe("auth token store: the profile index and dropping an account's logins", function () {
  this.timeout(30_000);
  let server: SecretsServer;
  let configDir: string;
  const logs: string[] = [];
  const used: Canaries[] = [];
  const clients: SecretsClient[] = [];
  const kv = async (): Promise<SecretsClient & KvLike> => {
    const client = new SecretsClient({ address: server.url, token: server.rootToken, sources: { env: {}, pulumi: undefined } });
    clients.push(client);
    return client;
  };
  const tokens = (tag: string) => {
    const t = canaries(tag);
    used.push(t);
    return t;
  };

  before(async () => {
    server = await startSecretsServer({});
    setLogger(createLogger({ level: 'debug', write: (line) => logs.push(line) }));
  });
  after(async () => {
    setLogger(createLogger());
    await server?.stop();
  });
  beforeEach(() => {
    configDir = mkdtempSync(join(tmpdir(), 'gantry-auth-index-'));
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
    // No token in the index or any log line, whatever the test did.
    const index = (() => {
      try {
        return readFileSync(profileIndexPath({ configDir }), 'utf8');
      } catch {
        return undefined;
      }
    })();
    for (const t of used) assertNoCanary(t, [index, ...logs], 'the profile index or a log line');
    rmSync(configDir, { recursive: true, force: true });
  });

  it('records which store holds each login (kind, spec, kv address, where in words, account, when) in a 0600 file without tokens; finds, lists and forgets them', async () => {
    const a = profileKey({ authUrl: 'http://127.0.0.1:5762', clientId: 'client-a', profile: 'default' });
    const b = profileKey({ authUrl: 'https://auth.example', clientId: 'client-b', profile: 'ci' });
    const fileStore = new FileTokenStore(configDir);
    const kvStore = new KvTokenStore(await kv(), 'secret/gantry/auth/ci');
    const entryA = await saveLogin(fileStore, makeLogin(a, tokens('ia')), { configDir });
    const entryB = await saveLogin(kvStore, makeLogin(b, tokens('ib'), { email: 'ci@example.org' }), { configDir });
    assert.deepEqual(entryA.store, { kind: 'file', spec: 'file' });
    assert.equal(entryA.location, `${fileStore.path(a)} (plain text, mode 0600)`);
    assert.deepEqual(entryA.account, { issuer: 'http://127.0.0.1:5762', sub: 'user-1', email: 'Person@Example.org' });
    assert.deepEqual(entryB.store, { kind: 'kv', spec: 'kv:secret/gantry/auth/ci', address: server.url });
    assert.equal(entryB.location, `kv engine secret/gantry/auth/ci at ${server.url}`);
    assert.ok(Math.abs(Date.parse(entryB.writtenAt) - Date.now()) < 60_000);

    const file = profileIndexPath({ configDir });
    assert.equal(file, join(configDir, 'auth', 'profiles.json'));
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(
      (await listProfiles({ configDir })).map((e) => e.profile),
      ['default', 'ci'],
    );
    assert.deepEqual(await findProfile(b, { configDir }), entryB);
    assert.equal(await findProfile({ ...b, clientId: 'client-c' }, { configDir }), undefined);

    // Writing again replaces the entry; the others stay in order.
    await saveLogin(fileStore, makeLogin(a, tokens('ia2')), { configDir });
    assert.deepEqual(
      (await listProfiles({ configDir })).map((e) => e.profile),
      ['ci', 'default'],
    );

    // Found without --store: the index opens the store that holds the login.
    const opened = await openStoreFor(b, { configDir, kv });
    assert.equal(opened?.store.kind, 'kv');
    assert.equal((await opened!.store.read(b))?.account?.email, 'ci@example.org');
    // A kv login with no kv configured: the error names the address to set.
    await assert.rejects(openStoreFor(b, { configDir, kv: async () => undefined }), {
      code: 'AUTH_KV_NOT_CONFIGURED',
      message: new RegExp(`at ${server.url.replace(/\./g, '\\.')}`),
    });

    assert.equal(await forgetProfile(a, { configDir }), true);
    assert.equal(await forgetProfile(a, { configDir }), false);
    assert.deepEqual(
      (await listProfiles({ configDir })).map((e) => e.profile),
      ['ci'],
    );

    const logout = await deleteLogin(b, { configDir, kv });
    assert.equal(logout.deleted, true);
    assert.deepEqual(await listProfiles({ configDir }), []);
    assert.equal((await (await kv()).kv('secret').read('gantry/auth/ci')).state, 'missing');
    assert.deepEqual(await deleteLogin(b, { configDir, kv }), { deleted: false, entry: undefined });
  });

  it('an index that does not parse is a usage error naming the file and what to do, not a silent empty list', async () => {
    const file = profileIndexPath({ configDir });
    await recordProfile(profileKey({ authUrl: 'http://127.0.0.1:1', clientId: 'c', profile: 'default' }), new FileTokenStore(configDir), { configDir });
    writeFileSync(file, '{"format": "gantry-auth-profiles/1", "profiles": [', { mode: 0o600 });
    await assert.rejects(listProfiles({ configDir }), {
      code: 'AUTH_INDEX_CORRUPT',
      exitCode: 2,
      message: /the profile index .*profiles\.json is not JSON \(line 1/,
    });
    writeFileSync(file, '{"format": "gantry-auth-profiles/1", "profiles": [{"authUrl": 1}]}', { mode: 0o600 });
    await assert.rejects(listProfiles({ configDir }), { code: 'AUTH_INDEX_CORRUPT', message: /broken entry \(profiles\[0\]\)/ });
  });

  it('DEV-RISC-SESSIONS-REVOKED, DEV-RISC-TOKEN-REVOKED, DEV-RISC-ACCOUNT-DISABLED: drops every stored login of the account (issuer + sub, or email) across stores, and only those', async () => {
    const server1 = 'http://127.0.0.1:5762';
    const fileStore = new FileTokenStore(configDir);
    const kvStore = new KvTokenStore(await kv(), 'secret/gantry/auth/work');
    const alice1 = profileKey({ authUrl: server1, clientId: 'client-a', profile: 'default' });
    const alice2 = profileKey({ authUrl: server1, clientId: 'client-a', profile: 'work' });
    const bob = profileKey({ authUrl: server1, clientId: 'client-a', profile: 'bob' });
    const aliceElsewhere = profileKey({ authUrl: 'https://other.example', clientId: 'client-z', profile: 'alice' });
    await saveLogin(fileStore, makeLogin(alice1, tokens('a1'), { issuer: server1, sub: 'alice', email: 'Alice@Example.org' }), { configDir });
    await saveLogin(kvStore, makeLogin(alice2, tokens('a2'), { issuer: `${server1}/`, sub: 'alice', email: 'alice@example.org' }), { configDir });
    await saveLogin(fileStore, makeLogin(bob, tokens('b'), { issuer: server1, sub: 'bob', email: 'bob@example.org' }), { configDir });
    await saveLogin(fileStore, makeLogin(aliceElsewhere, tokens('ae'), { issuer: 'https://other.example', sub: 'alice' }), { configDir });

    // sessions-revoked for iss + sub: both of alice's logins at that issuer (file and kv), not bob's, not another
    // issuer's "alice".
    const dropped = await dropAccountLogins({ issuer: server1, sub: 'alice' }, { configDir, kv });
    assert.deepEqual(dropped.failed, []);
    assert.deepEqual(dropped.dropped.map((e) => e.profile).sort(), ['default', 'work']);
    assert.equal(await fileStore.read(alice1), undefined);
    assert.equal(await kvStore.read(alice2), undefined);
    assert.ok(await fileStore.read(bob));
    assert.ok(await fileStore.read(aliceElsewhere));
    assert.deepEqual((await listProfiles({ configDir })).map((e) => e.profile).sort(), ['alice', 'bob']);
    assert.ok(logs.some((line) => /dropped the stored login of profile default at http:\/\/127\.0\.0\.1:5762/.test(line)));

    // account-disabled named by email (case ignored), limited to one authorization server.
    const byEmail = await dropAccountLogins({ email: 'BOB@example.org' }, { configDir, kv, authUrl: 'https://other.example' });
    assert.deepEqual(byEmail.dropped, []);
    const bobDropped = await dropAccountLogins({ email: 'BOB@example.org' }, { configDir, kv, authUrl: `${server1}/` });
    assert.deepEqual(
      bobDropped.dropped.map((e) => e.profile),
      ['bob'],
    );

    // A store that cannot be reached is reported, the entry kept, the others still dropped.
    const kvGone = new KvTokenStore(await kv(), 'secret/gantry/auth/gone');
    const carol = profileKey({ authUrl: server1, clientId: 'client-a', profile: 'carol' });
    const carol2 = profileKey({ authUrl: server1, clientId: 'client-a', profile: 'carol2' });
    await saveLogin(kvGone, makeLogin(carol, tokens('c'), { issuer: server1, sub: 'carol' }), { configDir });
    await saveLogin(fileStore, makeLogin(carol2, tokens('c2'), { issuer: server1, sub: 'carol' }), { configDir });
    const partly = await dropAccountLogins({ issuer: server1, sub: 'carol' }, { configDir, kv: async () => undefined });
    assert.deepEqual(
      partly.dropped.map((e) => e.profile),
      ['carol2'],
    );
    assert.equal(partly.failed.length, 1);
    assert.equal(partly.failed[0]!.entry.profile, 'carol');
    assert.match(
      partly.failed[0]!.reason,
      /the login of profile carol at .* is in the kv engine secret\/gantry\/auth\/gone at http:\/\/127\.0\.0\.1:\d+, and no kv engine is configured/,
    );
    assert.ok(await findProfile(carol, { configDir }));

    await assert.rejects(dropAccountLogins({ sub: 'alice' }, { configDir }), { code: 'INVALID_ARGUMENT' });
    await assert.rejects(dropAccountLogins({}, { configDir }), { code: 'INVALID_ARGUMENT' });
  });
});
