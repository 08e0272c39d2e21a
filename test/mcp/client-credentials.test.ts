/**
 * Signing in to a protected context server without a person — the client-credentials grant, the client authenticated
 * with its secret or its private key (private_key_jwt) — through connectContextServer and `gantry mcp call`, against
 * Gantry's context server and oidc-provider (an authorization server that is not Gantry's) on 127.0.0.1: no browser,
 * tokens kept and reused, a wrong secret or key refused (exit 1), bad input exit 2 before anything is sent, and the
 * secret and the key in no output, no error and no file Gantry writes.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileTokenStore } from '../../lib/auth/store/index.js';
import { silentLogger } from '../../lib/log.js';
import { ContextClientError, connectContextServer, type ConnectOptions } from '../../lib/mcp/client/index.js';
import { startContextServer, type ContextServer } from '../../lib/mcp/server/index.js';
import { exited, spawnGantry } from '../cli/gantry-process.js';
import { startAuthorizationServer, type AuthorizationServerPeer } from './fixtures-client/oidc.js';
import { testTools } from './fixtures-client/tools.js';

/** Every file under `dir`, read as text. */
async function filesUnder(dir: string): Promise<string> {
  let text = '';
  for (const name of await readdir(dir, { recursive: true })) {
    const path = join(dir, name);
    if ((await stat(path)).isFile()) text += await readFile(path, 'utf8');
  }
  return text;
}

describe('the MCP client signs in without a person (client credentials) against oidc-provider', function () {
  this.timeout(120_000);
  let op: AuthorizationServerPeer;
  const tokenRequests = () => op.requests.filter((request) => request.route === 'token').length;
  let server: ContextServer;
  let configDir: string;
  /** The base64 body of the private key's PEM, as it would leak. */
  let keyBody: string;

  before(async () => {
    op = await startAuthorizationServer();
    server = await startContextServer({ authorizationServer: op.issuer, tools: testTools, logger: silentLogger });
    keyBody = op.machine.keyPem.split('\n').slice(1, -2).join('');
  });
  after(async () => {
    await server?.stop();
    await op?.stop();
  });
  beforeEach(async () => {
    configDir = await mkdtemp(join(tmpdir(), 'gantry-mcp-machine-'));
  });
  afterEach(async () => {
    await rm(configDir, { recursive: true, force: true });
  });

  const options = (extra: Partial<ConnectOptions>): ConnectOptions => ({
    configDir,
    tokenStore: new FileTokenStore(configDir),
    logger: silentLogger,
    env: {},
    clientCredentials: true,
    openUrl: () => assert.fail('a sign-in without a person opened a browser'),
    ...extra,
  });

  async function echo(extra: Partial<ConnectOptions>, source: string) {
    const connection = await connectContextServer(server.url, options(extra));
    try {
      return (await connection.callTool('modules_resolve', { source })).structuredContent;
    } finally {
      await connection.close();
    }
  }

  it('CTX-STD-OAUTH21 CTX-AUTH-RESOURCE-ALWAYS: a client id and secret get a token for the server (resource sent), no browser; the next connection reuses it', async () => {
    const before = tokenRequests();
    assert.deepEqual(await echo({ clientId: op.machine.basicId, clientSecret: op.machine.secret }, 'one'), { echoed: 'one' });
    assert.equal(tokenRequests(), before + 1);
    const sent = op.requests.findLast((request) => request.route === 'token')!;
    assert.equal(sent.params.grant_type, 'client_credentials');
    assert.equal(sent.params.resource, server.url);
    assert.deepEqual(await echo({ clientId: op.machine.basicId, clientSecret: op.machine.secret }, 'two'), { echoed: 'two' });
    assert.equal(tokenRequests(), before + 1, 'the kept token was used');
    assert.ok(!(await filesUnder(configDir)).includes(op.machine.secret), 'the secret is in no file');
  });

  it('CTX-STD-OAUTH21: a client id and private key (a JWK) sign in with private_key_jwt; the key is in no file', async () => {
    assert.deepEqual(await echo({ clientId: op.machine.keyId, privateKey: op.machine.keyJwk }, 'key'), { echoed: 'key' });
    const sent = op.requests.findLast((request) => request.route === 'token')!;
    assert.equal(typeof sent.params.client_assertion, 'string');
    const files = await filesUnder(configDir);
    assert.ok(!files.includes(JSON.parse(op.machine.keyJwk).d as string));
  });

  it('a wrong secret is CTX_TOKEN_ERROR (exit 1, invalid_client) whose message holds no secret', async () => {
    const wrong = `${op.machine.secret}-wrong`;
    const error = await echo({ clientId: op.machine.basicId, clientSecret: wrong }, 'x').then(
      () => assert.fail('signed in with a wrong secret'),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof ContextClientError, String(error));
    assert.equal(error.code, 'CTX_TOKEN_ERROR');
    assert.equal(error.exitCode, 1);
    assert.equal(error.oauthError, 'invalid_client');
    assert.ok(!`${error.message} ${error.hint ?? ''} ${error.stack ?? ''}`.includes(op.machine.secret));
  });

  it('the client-credentials grant without a secret or key, or with both, is a usage error before anything is sent', async () => {
    const before = op.requests.length;
    for (const extra of [
      { clientId: op.machine.basicId },
      { clientSecret: op.machine.secret },
      { clientId: op.machine.keyId, clientSecret: op.machine.secret, privateKey: op.machine.keyPem },
      { clientId: op.machine.keyId, privateKey: 'no key' },
    ]) {
      await assert.rejects(
        () => connectContextServer(server.url, options(extra)),
        (error: unknown) => (error as { exitCode?: number }).exitCode === 2 && !String(error).includes(op.machine.secret),
      );
    }
    assert.equal(op.requests.length, before);
  });

  describe('gantry mcp call', () => {
    async function gantry(args: string[], env: Record<string, string> = {}) {
      const child = spawnGantry(['mcp', 'call', server.url, 'modules_resolve', '{"source": "cli"}', '--no-browser', '--store', 'file', ...args], {
        GANTRY_CONFIG_DIR: configDir,
        GANTRY_LOG: 'debug',
        ...env,
      });
      let output = '';
      child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const code = await exited(child);
      return { code, output };
    }
    const secretFile = () => join(configDir, 'secret.txt');
    const keyFile = () => join(configDir, 'client-key.pem');

    it('CTX-STD-OAUTH21: --client-credentials with --client-secret-file or GANTRY_MCP_CLIENT_SECRET, or --private-key-file: exit 0, no sign-in address, the secret and key in no output (debug log included) and no file but their own', async () => {
      await writeFile(secretFile(), `${op.machine.secret}\n`, { mode: 0o600 });
      await writeFile(keyFile(), op.machine.keyPem, { mode: 0o600 });
      const runs = [
        await gantry(['--client-id', op.machine.postId, '--client-credentials', '--client-secret-file', secretFile()]),
        await gantry(['--client-id', op.machine.basicId, '--client-credentials'], { GANTRY_MCP_CLIENT_SECRET: op.machine.secret }),
        await gantry(['--client-id', op.machine.keyId, '--client-credentials', '--private-key-file', keyFile(), '--private-key-alg', 'ES256']),
      ];
      for (const run of runs) {
        assert.equal(run.code, 0, run.output);
        assert.match(run.output, /"echoed": "cli"|cli/);
        assert.doesNotMatch(run.output, /\/auth\?/, 'no sign-in address');
        assert.ok(!run.output.includes(op.machine.secret), 'the secret is in the output');
        assert.ok(!run.output.includes(keyBody.slice(0, 40)), 'the key is in the output');
      }
      const files = (await filesUnder(configDir)).replace(op.machine.keyPem, '').replace(`${op.machine.secret}\n`, '');
      assert.ok(!files.includes(op.machine.secret) && !files.includes(keyBody.slice(0, 40)), 'the secret or key in a file Gantry wrote');
    });

    it('a wrong secret or a key other than the registered one: exit 1, neither in the output', async () => {
      await writeFile(secretFile(), `${op.machine.secret}-wrong\n`);
      const secret = await gantry(['--client-id', op.machine.basicId, '--client-credentials', '--client-secret-file', secretFile()]);
      assert.equal(secret.code, 1, secret.output);
      assert.match(secret.output, /invalid_client/);
      assert.ok(!secret.output.includes(op.machine.secret));
      const { generateKeyPairSync } = await import('node:crypto');
      const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
      await writeFile(keyFile(), other);
      const key = await gantry(['--client-id', op.machine.keyId, '--client-credentials', '--private-key-file', keyFile()]);
      assert.equal(key.code, 1, key.output);
      assert.match(key.output, /invalid_client/);
      assert.ok(!key.output.includes(other.split('\n')[1]!));
    });

    it('a missing key file, a file that is no key, a secret and a key both, no secret at all, --private-key-alg alone: exit 2, nothing sent, nothing of the secret shown', async () => {
      await writeFile(secretFile(), `${op.machine.secret}\n`);
      await writeFile(keyFile(), `not a key but ${op.machine.secret}\n`);
      const before = op.requests.length;
      for (const args of [
        ['--client-id', op.machine.keyId, '--client-credentials', '--private-key-file', join(configDir, 'missing.pem')],
        ['--client-id', op.machine.keyId, '--client-credentials', '--private-key-file', keyFile()],
        ['--client-id', op.machine.keyId, '--client-credentials', '--private-key-file', keyFile(), '--client-secret-file', secretFile()],
        ['--client-id', op.machine.keyId, '--client-credentials'],
        ['--client-id', op.machine.keyId, '--private-key-alg', 'ES256'],
      ]) {
        const run = await gantry(args);
        assert.equal(run.code, 2, `${args.join(' ')}: ${run.output}`);
        assert.ok(!run.output.includes(op.machine.secret), run.output);
      }
      assert.equal(op.requests.length, before, 'nothing reached the authorization server');
    });
  });
});
