// The library and the command read the same settings the same way and keep logins in the same places: docs/auth.md's
// and docs/mcp.md's library examples run as written in consumer projects with only environment variables set, on a
// machine without a keyring (no D-Bus session), keeping the tokens in the kv engine of SECRETS_ADDR/SECRETS_TOKEN; a
// login either one made is used by the other; with no safe place for the tokens nobody is asked to approve anything;
// and the library's hints name options where the command's name flags.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startOAuthServer, type OAuthServer } from '../../devserver/oauth/index.js';
import { startRegistryServer, type RegistryServer } from '../../devserver/registry/index.js';
import { startSecretsServer, type SecretsServer } from '../../devserver/secrets/index.js';
import { silentLogger } from '../../lib/log.js';
import { startContextServer, type ContextServer } from '../../lib/mcp/server/index.js';
import { SecretsClient } from '../../lib/secrets/index.js';
import { createConsumer, removeTempDir, repoRoot } from '../harness/consumer.js';
import { FormBrowser } from '../mcp/fixtures-client/browser.js';

const bin = fileURLToPath(new URL('../../dist/lib/cli/main.js', import.meta.url));
const libraryEntry = fileURLToPath(new URL('../../dist/lib/index.js', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a process; `onStderr` sees stderr as it comes (to approve a code or follow a sign-in address). */
function runProcess(file: string, args: string[], env: NodeJS.ProcessEnv, options: { cwd?: string; onStderr?: (text: string) => void } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env, ...(options.cwd ? { cwd: options.cwd } : {}) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk;
      options.onStderr?.(stderr);
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function docsExample(page: string, heading: string): Promise<string> {
  const docs = await readFile(path.join(repoRoot, page), 'utf8');
  const block = /```js\n([\s\S]*?)```/.exec(docs.slice(docs.indexOf(heading)));
  assert.ok(block, `${page} has a js example after "${heading}"`);
  return block[1]!;
}

/** An ES module example as CommonJS: `require` for the import, the rest inside an async function. */
function asCommonJs(example: string): string {
  const [first, ...rest] = example.split('\n');
  const required = first!.replace(/^import (\{[^}]*\}) from 'gantry';.*$/, "const $1 = require('gantry');");
  return `${required}\n(async () => {\n${rest.join('\n')}\n})().catch((error) => { console.error(error.message); console.error('hint:', error.hint); process.exitCode = 1; });\n`;
}

describe('LIB-CLI-SAME-SETTINGS: the library resolves settings and keeps logins as the command does', function () {
  this.timeout(240_000);
  let secrets: SecretsServer;
  let oauth: OAuthServer;
  let client: { id: string; secret: string | null };
  let configDir: string;
  const oauthLog: string[] = [];
  const kvClients: SecretsClient[] = [];

  before(async () => {
    secrets = await startSecretsServer({});
    oauth = await startOAuthServer({ host: '127.0.0.1', port: 0, interval: 1, log: (line) => oauthLog.push(line) });
    client = oauth.registerClient({ name: 'same settings' });
  });
  after(async () => {
    for (const kv of kvClients) kv.close();
    await oauth?.stop();
    await secrets?.stop();
  });
  beforeEach(async () => {
    configDir = await mkdtemp(path.join(tmpdir(), 'gantry-same-settings-'));
  });
  afterEach(async () => {
    await rm(configDir, { recursive: true, force: true });
  });

  /** What a CI machine has: the variables `gantry dev` prints and the kv engine's, no D-Bus session (no keyring). */
  function env(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
    const base: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: configDir,
      GANTRY_CONFIG_DIR: configDir,
      GANTRY_LOG: 'warn',
      GANTRY_AUTH_URL: oauth.url,
      GANTRY_OAUTH_CLIENT_ID: client.id,
      GANTRY_OAUTH_CLIENT_SECRET: client.secret!,
      SECRETS_ADDR: secrets.url,
      SECRETS_TOKEN: secrets.rootToken,
    };
    for (const [name, value] of Object.entries(extra)) {
      if (value === undefined) delete base[name];
      else base[name] = value;
    }
    return base;
  }
  const gantry = (args: string[], environment = env(), onStderr?: (text: string) => void) =>
    runProcess(process.execPath, [bin, ...args], environment, onStderr ? { onStderr } : {});
  /** Approves the device code the text shows (the docs example's `enter CODE`, or login --json's user_code). */
  function approver(): (text: string) => void {
    const approved = new Set<string>();
    return (text) => {
      for (const match of text.matchAll(/(?:enter |"user_code":")([A-Za-z0-9-]{4,})/g)) {
        if (approved.has(match[1]!)) continue;
        approved.add(match[1]!);
        setTimeout(() => oauth.approve(match[1]!), 200).unref();
      }
    };
  }
  async function kvLogin(profile: string): Promise<Record<string, unknown> | null> {
    const kv = new SecretsClient({ address: secrets.url, token: secrets.rootToken, sources: { env: {}, pulumi: undefined } });
    kvClients.push(kv);
    return (await kv.kv('secret').read(`gantry/auth/${profile}`)).data;
  }

  for (const kind of ['esm', 'cjs'] as const) {
    it(`LIB-CLI-SAME-SETTINGS: docs/auth.md's library example (${kind}) runs as written with only environment variables and no keyring, keeps the login in the kv engine, and gantry auth uses it`, async () => {
      const example = await docsExample('docs/auth.md', 'From the library');
      const dir = await createConsumer(kind, `auth-consumer-${kind}`);
      try {
        const file = path.join(dir, kind === 'esm' ? 'example.mjs' : 'example.cjs');
        await writeFile(file, kind === 'esm' ? example : asCommonJs(example));
        const profile = `docs-${kind}`;
        const run = await runProcess(process.execPath, [file], env({ GANTRY_AUTH_PROFILE: profile }), { cwd: dir, onStderr: approver() });
        assert.equal(run.code, 0, run.stderr);
        assert.match(run.stdout, /dev@gantry\.test/);
        assert.match(run.stdout, /\[hidden\]/);
        const stored = await kvLogin(profile);
        assert.equal(stored?.clientId, client.id, 'kept at secret/gantry/auth/<GANTRY_AUTH_PROFILE>');
        const token = await gantry(['auth', 'token'], env({ GANTRY_AUTH_PROFILE: profile }));
        assert.equal(token.code, 0, token.stderr);
        assert.equal(token.stdout.trim(), (stored!.tokens as { accessToken: string }).accessToken, 'the command hands out the login the library kept');
        const status = await gantry(['auth', 'status', '--offline'], env({ GANTRY_AUTH_PROFILE: profile }));
        assert.match(status.stdout, new RegExp(`tokens kept in: kv engine secret/gantry/auth/${profile} at ${secrets.url.replace(/[.]/g, '\\.')}`));
      } finally {
        await removeTempDir(dir);
      }
    });
  }

  it('LIB-CLI-SAME-SETTINGS: a login gantry auth login kept in the kv engine (no --store, no keyring) is used by the library by default (openProfileLogin)', async () => {
    const login = await gantry(['auth', 'login', '--json', '--profile', 'cli-made'], env(), approver());
    assert.equal(login.code, 0, login.stderr);
    assert.equal((JSON.parse(login.stdout) as { store: { kind: string } }).store.kind, 'kv');
    const program = `import { openProfileLogin } from ${JSON.stringify(libraryEntry)};
const { session, key } = await openProfileLogin();
console.log(key.profile, await session.getAccessToken());
session.close();`;
    const used = await runProcess(process.execPath, ['--input-type=module', '-e', program], env({ GANTRY_AUTH_PROFILE: 'cli-made' }));
    assert.equal(used.code, 0, used.stderr);
    const token = await gantry(['auth', 'token', '--profile', 'cli-made']);
    assert.equal(used.stdout.trim(), `cli-made ${token.stdout.trim()}`);
  });

  it('LIB-CLI-SAME-SETTINGS: with no keyring and no kv engine, the docs example and the command stop before a code is asked for, with the hint of their face', async () => {
    const noKv = env({ SECRETS_ADDR: undefined, SECRETS_TOKEN: undefined });
    const before = oauthLog.filter((line) => line.includes('/device/code')).length;
    const example = await docsExample('docs/auth.md', 'From the library');
    const file = path.join(configDir, 'example.mjs');
    await writeFile(
      file,
      example
        .replace("from 'gantry'", `from ${JSON.stringify(libraryEntry)}`)
        .replace(
          'const { store } = await openTokenStore(undefined);',
          'const { store } = await openTokenStore(undefined).catch((error) => { console.error(`${error.message}\\nhint: ${error.hint}`); process.exit(2); });',
        ),
    );
    const library = await runProcess(process.execPath, [file], noKv, { onStderr: approver() });
    assert.equal(library.code, 2, library.stderr);
    assert.match(
      library.stderr,
      /no safe place for the tokens: the OS keyring is not reachable: .*, and no kv engine is configured \(SECRETS_ADDR is not set\)/,
    );
    assert.match(library.stderr, /hint: choose one: set SECRETS_ADDR and SECRETS_TOKEN.*store: 'file' or insecureStorage: true/);
    assert.doesNotMatch(library.stderr, /--store|--insecure-storage/);
    const command = await gantry(['auth', 'login'], noKv, approver());
    assert.equal(command.code, 2, command.stderr);
    assert.match(command.stderr, /hint: choose one: set SECRETS_ADDR and SECRETS_TOKEN.*--store file or --insecure-storage/);
    // SECRETS_ADDR without a token: said as such.
    const noToken = await gantry(['auth', 'login'], env({ SECRETS_TOKEN: undefined }), approver());
    assert.equal(noToken.code, 2, noToken.stderr);
    assert.match(noToken.stderr, /no kv engine is configured \(SECRETS_ADDR is set, SECRETS_TOKEN is not\)/);
    // A token the kv engine refuses: the command stops there too, with the command's hint (no library option named).
    const refused = await gantry(['auth', 'login'], env({ SECRETS_TOKEN: 'not-a-token' }), approver());
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /hint: .*check SECRETS_TOKEN/i);
    assert.doesNotMatch(refused.stderr, /`token` option/);
    assert.equal(oauthLog.filter((line) => line.includes('/device/code')).length, before, 'no device code was asked for: nobody approved in vain');
  });

  it('LIB-CLI-SAME-SETTINGS: a kv engine address the command reaches over the wrong scheme gets the command\'s hint (SECRETS_ADDR), never the library\'s "`address` option"', async () => {
    const wrongScheme = secrets.url.replace('http://', 'https://');
    const run = await gantry(['auth', 'login'], env({ SECRETS_ADDR: wrongScheme }), approver());
    assert.equal(run.code, 3, run.stderr);
    assert.match(
      run.stderr,
      /hint: The service at 127\.0\.0\.1:\d+ speaks plain http, not TLS: set the address \(SECRETS_ADDR, or --address in gantry secrets\)/,
    );
    assert.doesNotMatch(run.stderr, /option/);
  });

  describe('the context-server client', () => {
    let registry: RegistryServer;
    let server: ContextServer;
    before(async () => {
      registry = await startRegistryServer({ dir: path.join(repoRoot, 'examples/modules') });
      server = await startContextServer({ authorizationServer: oauth.url, env: {}, logger: silentLogger });
    });
    after(async () => {
      await server?.stop();
      await registry?.stop();
    });

    /** docs/mcp.md's example against this server, its tool asking the embedded registry. */
    async function mcpExample(): Promise<string> {
      return (await docsExample('docs/mcp.md', '## The library'))
        .replace("from 'gantry'", `from ${JSON.stringify(libraryEntry)}`)
        .replace('https://mcp.example.com/mcp', server.url)
        .replace('hashicorp/consul/aws', `${new URL(registry.url).host}/gantry/network/aws`);
    }
    /** Follows every sign-in address printed (the CLI's indented line, the example's `sign in: <url>`). */
    function signer(browser: FormBrowser, count: { n: number }): (text: string) => void {
      const seen = new Set<string>();
      return (text) => {
        for (const match of text.matchAll(/(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)/g)) {
          if (seen.has(match[1]!)) continue;
          seen.add(match[1]!);
          count.n += 1;
          void browser.authorize(match[1]!);
        }
      };
    }

    it("LIB-CLI-SAME-SETTINGS: the login gantry mcp tools kept in the kv engine is used by docs/mcp.md's example without signing in, and the example's login by the command", async () => {
      const signIns = { n: 0 };
      const tools = await gantry(['mcp', 'tools', server.url, '--no-browser'], env(), signer(new FormBrowser(), signIns));
      assert.equal(tools.code, 0, tools.stderr);
      assert.equal(signIns.n, 1);
      assert.match(tools.stderr, /keyring is not reachable/);
      const file = path.join(configDir, 'mcp-example.mjs');
      await writeFile(file, await mcpExample());
      const library = await runProcess(process.execPath, [file], env());
      assert.equal(library.code, 0, library.stderr);
      assert.doesNotMatch(library.stderr, /sign in:/, "the command's login was used");
      assert.match(library.stdout, /^6 [\s\S]*1\.1\.0/);

      // The other way: the example signs in (a fresh configuration folder and kv engine), then the command uses its login.
      const other = await mkdtemp(path.join(tmpdir(), 'gantry-same-settings-mcp-'));
      const secondKv = await startSecretsServer({});
      try {
        const libraryFirst = { n: 0 };
        const signedIn = await runProcess(
          process.execPath,
          [file],
          env({ GANTRY_CONFIG_DIR: other, SECRETS_ADDR: secondKv.url, SECRETS_TOKEN: secondKv.rootToken }),
          { onStderr: signer(new FormBrowser(), libraryFirst) },
        );
        assert.equal(signedIn.code, 0, signedIn.stderr);
        assert.equal(libraryFirst.n, 1);
        const again = { n: 0 };
        const command = await gantry(
          ['mcp', 'tools', server.url, '--no-browser'],
          env({ GANTRY_CONFIG_DIR: other, SECRETS_ADDR: secondKv.url, SECRETS_TOKEN: secondKv.rootToken }),
          signer(new FormBrowser(), again),
        );
        assert.equal(command.code, 0, command.stderr);
        assert.equal(again.n, 0, "the example's login was used");
      } finally {
        await secondKv.stop();
        await rm(other, { recursive: true, force: true });
      }
    });

    it('LIB-CLI-SAME-SETTINGS: a sign-in kept in the kv engine is used from another configuration folder (a CI job, a second machine) — by the command and by the example — without a second sign-in that the store would then refuse', async () => {
      const first = await mkdtemp(path.join(tmpdir(), 'gantry-same-settings-first-'));
      const second = await mkdtemp(path.join(tmpdir(), 'gantry-same-settings-second-'));
      const third = await mkdtemp(path.join(tmpdir(), 'gantry-same-settings-third-'));
      const sharedKv = await startSecretsServer({});
      const shared = (dir: string) => env({ GANTRY_CONFIG_DIR: dir, SECRETS_ADDR: sharedKv.url, SECRETS_TOKEN: sharedKv.rootToken });
      try {
        const signIns = { n: 0 };
        const tools = await gantry(['mcp', 'tools', server.url, '--no-browser'], shared(first), signer(new FormBrowser(), signIns));
        assert.equal(tools.code, 0, tools.stderr);
        assert.equal(signIns.n, 1);
        const again = { n: 0 };
        const elsewhere = await gantry(['mcp', 'tools', server.url, '--no-browser'], shared(second), signer(new FormBrowser(), again));
        assert.equal(elsewhere.code, 0, elsewhere.stderr);
        assert.equal(again.n, 0, `the kept sign-in was used: ${elsewhere.stderr}`);
        const file = path.join(third, 'mcp-example.mjs');
        await writeFile(file, await mcpExample());
        const library = await runProcess(process.execPath, [file], shared(third));
        assert.equal(library.code, 0, library.stderr);
        assert.doesNotMatch(library.stderr, /sign in:|refusing to mix/);
      } finally {
        await sharedKv.stop();
        for (const dir of [first, second, third]) await rm(dir, { recursive: true, force: true });
      }
    });

    it('LIB-CLI-SAME-SETTINGS: with no safe place for the tokens, the example stops before the browser opens, naming options; the command names flags', async () => {
      const noKv = env({ SECRETS_ADDR: undefined, SECRETS_TOKEN: undefined });
      const file = path.join(configDir, 'mcp-example.mjs');
      await writeFile(file, await mcpExample());
      const library = await runProcess(process.execPath, [file], noKv);
      assert.notEqual(library.code, 0);
      assert.doesNotMatch(library.stderr, /sign in:/);
      assert.match(library.stderr, /no safe place for the tokens/);
      const command = await gantry(['mcp', 'tools', server.url, '--no-browser'], noKv);
      assert.equal(command.code, 2, command.stderr);
      assert.doesNotMatch(command.stderr, /\/authorize\?/);
      assert.match(command.stderr, /hint: choose one: .*--store file or --insecure-storage/);
    });
  });
});
