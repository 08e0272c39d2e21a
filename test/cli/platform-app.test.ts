// `gantry platform … --installation <id>` and `--as-app` in processes of their own against the embedded platform API:
// an app's private key from a file, from the PEM text, or from the kv engine (the embedded secrets server), and every
// bad input refused before anything is sent, without quoting the key.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startPlatformServer, type PlatformServer } from '../../devserver/platform/index.js';
import { startSecretsServer, type SecretsServer } from '../../devserver/secrets/index.js';
import { KvEngine, SecretsClient } from '../../lib/secrets/index.js';
import { runGantry as gantry } from './gantry-process.js';

describe('gantry platform as an app: --installation and --as-app (against the embedded platform API)', function () {
  this.timeout(120_000);
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const keyLine = pem.split('\n')[1]!;
  let server: PlatformServer;
  let secrets: SecretsServer;
  let folder: string;
  let keyFile: string;
  let env: Record<string, string>;
  const requests: string[] = [];
  before(async () => {
    server = await startPlatformServer({ apps: [{ id: 3, publicKey, installations: [{ id: 5, account: 'gantry' }] }], log: (line) => requests.push(line) });
    secrets = await startSecretsServer({});
    folder = await mkdtemp(path.join(tmpdir(), 'gantry-app-cli-'));
    keyFile = path.join(folder, 'app.pem');
    await writeFile(keyFile, pem, { mode: 0o600 });
    env = { PLATFORM_API_URL: server.url, GANTRY_APP_ID: '3', GANTRY_APP_PRIVATE_KEY_FILE: keyFile };
  });
  after(async () => {
    await server.stop();
    await secrets.stop();
    await rm(folder, { recursive: true, force: true });
  });
  const sent = () => requests.filter((line) => !/listening/.test(line)).length;

  it("RATE-PRI-INSTALLATION-MIN: --as-app lists the app's installations; --installation acts as one (its repositories, its budget in rate-limit, a status by its bot)", async () => {
    const installations = await gantry(['platform', 'api', '/app/installations', '--as-app'], env);
    assert.equal(installations.code, 0, installations.stderr);
    assert.deepEqual(
      JSON.parse(installations.stdout).map((i: { id: number }) => i.id),
      [5],
    );
    const repositories = await gantry(['platform', 'api', '/installation/repositories', '--installation', '5'], env);
    assert.equal(repositories.code, 0, repositories.stderr);
    assert.ok(JSON.parse(repositories.stdout).total_count >= 1, repositories.stdout);
    const limits = await gantry(['platform', 'rate-limit', '--installation', '5'], env);
    assert.equal(limits.code, 0, limits.stderr);
    assert.match(limits.stdout, /identity: installation \(configured\), 5000 an hour expected per installation/);
    const status = await gantry(['--json', 'platform', 'status', 'gantry/demo', 'd'.repeat(40), '--state', 'success', '--context', 'gantry/app'], {
      ...env,
      GANTRY_APP_INSTALLATION_ID: '5',
    });
    assert.equal(status.code, 0, status.stderr);
    assert.match(JSON.parse(status.stdout).creator ?? '', /\[bot\]$/, `GANTRY_APP_INSTALLATION_ID is the default of --installation: ${status.stdout}`);
    for (const output of [installations, repositories, limits, status]) assert.ok(!`${output.stdout}${output.stderr}`.includes(keyLine));
  });

  it('the key from GANTRY_APP_PRIVATE_KEY (the PEM text) and from the kv engine (GANTRY_APP_PRIVATE_KEY_SECRET); a missing secret field is exit 1', async () => {
    const fromText = await gantry(['platform', 'api', '/app', '--as-app'], { PLATFORM_API_URL: server.url, GANTRY_APP_ID: '3', GANTRY_APP_PRIVATE_KEY: pem });
    assert.equal(fromText.code, 0, fromText.stderr);
    assert.equal(JSON.parse(fromText.stdout).id, 3);
    const client = new SecretsClient({ address: secrets.url, token: secrets.rootToken });
    try {
      await new KvEngine(client, 'secret').write('ci/platform-app', { private_key: pem });
    } finally {
      client.close();
    }
    const secretEnv = { PLATFORM_API_URL: server.url, GANTRY_APP_ID: '3', SECRETS_ADDR: secrets.url, SECRETS_TOKEN: secrets.rootToken };
    const fromKv = await gantry(['platform', 'api', '/installation/repositories', '--installation', '5'], {
      ...secretEnv,
      GANTRY_APP_PRIVATE_KEY_SECRET: 'secret/ci/platform-app#private_key',
    });
    assert.equal(fromKv.code, 0, fromKv.stderr);
    const noField = await gantry(['platform', 'api', '/app', '--as-app'], { ...secretEnv, GANTRY_APP_PRIVATE_KEY_SECRET: 'secret/ci/platform-app#pem' });
    assert.equal(noField.code, 1, noField.stderr);
    assert.match(noField.stderr, /secret\/ci\/platform-app has no text field pem/);
    assert.ok(!noField.stderr.includes(keyLine));
  });

  it('bad input is exit 2 before anything is sent: a bad installation id, --as-app with --installation, no GANTRY_APP_ID, a key that is not PEM (not quoted), a malformed secret reference', async () => {
    const notPem = path.join(folder, 'not.pem');
    await writeFile(notPem, 'hunter2\n');
    const before = sent();
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [['platform', 'api', '/installation/repositories', '--installation', 'abc'], env, /--installation: "abc" is not an installation id/],
      [['platform', 'api', '/app', '--as-app', '--installation', '5'], env, /--installation and --as-app contradict each other/],
      [['platform', 'rate-limit'], { ...env, GANTRY_APP_INSTALLATION_ID: '0' }, /GANTRY_APP_INSTALLATION_ID: "0" is not an installation id/],
      [['platform', 'api', '/app', '--as-app'], { PLATFORM_API_URL: server.url, GANTRY_APP_PRIVATE_KEY_FILE: keyFile }, /needs the app's id in GANTRY_APP_ID/],
      [['platform', 'api', '/app', '--as-app'], { ...env, GANTRY_APP_PRIVATE_KEY_FILE: notPem }, /is not a PEM private key/],
      [
        ['platform', 'api', '/app', '--as-app'],
        { ...env, GANTRY_APP_PRIVATE_KEY_FILE: '', GANTRY_APP_PRIVATE_KEY_SECRET: 'no-field' },
        /is not <mount>\/<path>#<field>/,
      ],
    ];
    for (const [args, caseEnv, expected] of cases) {
      const result = await gantry(args, caseEnv);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, expected);
      assert.ok(!result.stderr.includes('hunter2'), 'the key file is never quoted');
    }
    assert.equal(sent(), before, 'nothing was sent');
  });

  it('RATE-REVOKED-TOKEN-401: a key the platform does not know is exit 1, the message naming the app id and the key, neither quoted', async () => {
    const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    const result = await gantry(['platform', 'api', '/installation/repositories', '--installation', '5'], {
      PLATFORM_API_URL: server.url,
      GANTRY_APP_ID: '3',
      GANTRY_APP_PRIVATE_KEY: stranger,
    });
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /answered 401/);
    assert.match(result.stderr, /app id \(3\).*private key/s);
    assert.ok(!result.stderr.includes(stranger.split('\n')[1]!));
  });
});
