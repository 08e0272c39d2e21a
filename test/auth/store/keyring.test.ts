// The OS keyring store against a real Secret Service: gnome-keyring on a private D-Bus session bus
// (test/peers/keyring.ts). Each scenario runs in its own process (helpers/store-child.ts): libdbus keeps the first
// bus it finds for the life of a process.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSecretsServer, type SecretsServer } from '../../../devserver/secrets/index.js';
import { keyringAccount, profileKey, type ProfileKey } from '../../../lib/auth/store/index.js';
import { startKeyringPeer, type KeyringPeer } from '../../peers/keyring.js';
import { runStoreChild, type ChildRun } from './helpers/run-store-child.js';
import { assertNoCanary, canaries, makeLogin, type Canaries } from './helpers/logins.js';

describe('auth token store: OS keyring (Secret Service through gnome-keyring on a private D-Bus bus)', function () {
  this.timeout(120_000);
  let peer: KeyringPeer;
  let configDir: string;
  const used: Canaries[] = [];
  const runs: ChildRun[] = [];
  const key: ProfileKey = profileKey({ authUrl: 'http://127.0.0.1:5762/', clientId: '123-device.apps.example', profile: 'default' });

  before(async () => {
    // Fails, never skips, when the peer cannot start.
    peer = await startKeyringPeer();
    configDir = mkdtempSync(join(tmpdir(), 'gantry-auth-keyring-'));
  });
  after(async () => {
    await peer?.stop();
    if (configDir) rmSync(configDir, { recursive: true, force: true });
  });
  afterEach(() => {
    // No token in any error message, log line or output of any scenario.
    for (const run of runs.splice(0))
      for (const tokens of used)
        assertNoCanary(
          tokens,
          [run.stderr, ...run.logs, JSON.stringify(run.outcomes.map((o) => (o.ok ? { ...o, value: stripReadBack(o.value) } : o)))],
          'a keyring scenario',
        );
  });

  /** A read's `login` field carries the tokens on purpose (to compare); everything else must not. */
  function stripReadBack(value: unknown): unknown {
    if (value && typeof value === 'object' && 'login' in value) return { ...(value as Record<string, unknown>), login: '(compared separately)' };
    return value;
  }

  async function run(ops: Parameters<typeof runStoreChild>[0]['ops'], options: Parameters<typeof runStoreChild>[0]['options'] = {}): Promise<ChildRun> {
    const result = await runStoreChild({ options: { configDir, ...options }, ops }, peer.env);
    runs.push(result);
    assert.equal(result.code, 0, result.stderr);
    return result;
  }

  /** The items the Secret Service holds for service gantry, asked with dbus-send (not through the code under test). */
  function itemsInKeyring(account: string): string {
    const found = spawnSync(
      'dbus-send',
      [
        '--session',
        '--print-reply',
        '--dest=org.freedesktop.secrets',
        '/org/freedesktop/secrets',
        'org.freedesktop.Secret.Service.SearchItems',
        `dict:string:string:service,gantry,username,${account}`,
      ],
      { env: { PATH: process.env.PATH, ...peer.env }, encoding: 'utf8' },
    );
    assert.equal(found.status, 0, found.stderr);
    return found.stdout;
  }

  it('DEV-AUTH-REFRESH-REUSE: auto mode picks the reachable keyring; the login a process writes is read back whole by a later one (refresh token, DEV-TOK-REFRESH-EXPIRES-IN expiry, DEV-TOK-SCOPE scope with its case), and the index says where', async () => {
    const tokens = canaries('kr');
    used.push(tokens);
    const login = makeLogin(key, tokens);
    const first = await run([{ op: 'open' }, { op: 'save', login }]);
    const opened = first.outcomes[0]!;
    assert.ok(opened.ok, JSON.stringify(opened));
    const openedValue = opened.value as { kind: string; location: string; fallbackReason?: string; warning?: string };
    assert.equal(openedValue.kind, 'keyring');
    assert.equal(openedValue.fallbackReason, undefined);
    assert.equal(openedValue.warning, undefined);
    assert.equal(openedValue.location, 'OS keyring (Secret Service, service gantry)');
    assert.ok(first.outcomes[1]!.ok, JSON.stringify(first.outcomes[1]));

    // The account a person sees in their keyring application names profile, server and client.
    assert.equal(keyringAccount(key), 'default@http://127.0.0.1:5762 (client 123-device.apps.example)');
    const items = itemsInKeyring(keyringAccount(key));
    assert.match(items, /\/org\/freedesktop\/secrets\/collection\/login\/\d+/);

    const second = await run([
      { op: 'open', spec: 'keyring' },
      { op: 'read', key },
      { op: 'readIndexed', key },
    ]);
    const read = second.outcomes[1]!;
    assert.ok(read.ok, JSON.stringify(read));
    const value = read.value as { login: unknown; json: string; inspected: string; describe: string };
    assert.deepEqual(value.login, login);
    assert.match(
      value.describe,
      /^OS keyring \(Secret Service\), service gantry, account "default@http:\/\/127\.0\.0\.1:5762 \(client 123-device\.apps\.example\)"$/,
    );
    // What logging a login shows: no token.
    assertNoCanary(tokens, [value.json, value.inspected], 'a logged login');
    assert.match(value.json, /\[hidden\]/);
    const indexed = second.outcomes[2]!;
    assert.ok(indexed.ok, JSON.stringify(indexed));
    assert.deepEqual((indexed.value as { kind: string; found: boolean }).kind, 'keyring');
    assert.equal((indexed.value as { found: boolean }).found, true);
    const index = readFileSync(join(configDir, 'auth', 'profiles.json'), 'utf8');
    assertNoCanary(tokens, [index], 'the profile index');
    assert.match(index, /"spec": "keyring"/);
  });

  it("deletes a login from the keyring (true once, then false) and never another key's", async () => {
    const tokens = canaries('del');
    used.push(tokens);
    const other = profileKey({ authUrl: 'http://127.0.0.1:5762', clientId: '123-device.apps.example', profile: 'ci' });
    const result = await run([
      { op: 'open', spec: 'keyring' },
      { op: 'write', login: makeLogin(key, tokens) },
      { op: 'write', login: makeLogin(other, tokens) },
      { op: 'delete', key },
      { op: 'delete', key },
      { op: 'read', key },
      { op: 'read', key: other },
      { op: 'delete', key: other },
    ]);
    assert.deepEqual(
      result.outcomes.map((o) => (o.ok ? (o.value && typeof o.value === 'object' ? 'login' : o.value) : o.error.code)),
      ['login', null, null, true, false, null, 'login', true],
    );
    assert.doesNotMatch(itemsInKeyring(keyringAccount(key)), /collection\/login\/\d+/);
  });

  describe('a locked keyring', () => {
    let server: SecretsServer;
    before(async () => {
      server = await startSecretsServer({});
      await peer.lock();
    });
    after(async () => {
      await peer.unlock();
      await server?.stop();
    });

    it('auto mode does not use a locked keyring (a write would ask for its password in a dialog): it falls back to the kv engine and says why', async () => {
      const result = await run([{ op: 'open' }], { kvAddress: server.url, kvToken: server.rootToken });
      const opened = result.outcomes[0]!;
      assert.ok(opened.ok, JSON.stringify(opened));
      const value = opened.value as { kind: string; spec: string; fallbackReason: string };
      assert.equal(value.kind, 'kv');
      assert.equal(value.spec, 'kv:secret/gantry/auth/default');
      assert.match(value.fallbackReason, /keyring is not reachable: the Secret Service's default keyring is locked/);
    });

    it('--store keyring on a locked keyring: a write that cannot unlock it is a usage error (exit 2) naming the keyring, without the tokens', async () => {
      const tokens = canaries('locked');
      used.push(tokens);
      const result = await run([
        { op: 'open', spec: 'keyring' },
        { op: 'write', login: makeLogin(key, tokens) },
      ]);
      assert.ok(result.outcomes[0]!.ok);
      const write = result.outcomes[1]!;
      assert.ok(!write.ok);
      assert.equal(write.error.code, 'AUTH_KEYRING');
      assert.equal(write.error.exitCode, 2);
      assert.match(write.error.message, /the OS keyring \(Secret Service\) could not write the login of profile default at http:\/\/127\.0\.0\.1:5762/);
      // LIB-CLI-SAME-SETTINGS: the library's hint names its options, the command's its flags.
      assert.match(write.error.hint ?? '', /SECRETS_ADDR and SECRETS_TOKEN set, store: 'kv:<mount>\/<path>'\) or in a file \(store: 'file'\)/);
      assert.match(write.error.cliHint ?? '', /--store kv:<mount>\/<path>\) or in a file \(--store file\)/);
    });
  });
});
