// The classes of defects a new user met in `gantry secrets` (issue 11), each tested across every command and output
// path it can occur on, against the embedded kv server and through the command in its own process.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import vault from 'node-vault';
import { startSecretsServer, type SecretsServer } from '../../devserver/secrets/index.js';
import { SecretsClient, SecretsError } from '../../lib/secrets/index.js';
import { UsageError } from '../../lib/errors.js';
import { mask } from '../../lib/cli/output.js';
import { kvSecretOperations } from '../../providers/kv-secret.js';
import { runNode, withEnv, type Ran } from './helpers/run-process.js';
import { startScriptedPeer } from './helpers/scripted-peer.js';

// The built command (`npm run build` first, as `pretest` does): tsx compiling the sources cost each run a second of CPU.
const bin = fileURLToPath(new URL('../../dist/lib/cli/main.js', import.meta.url));

describe('gantry secrets: the classes of issue 11', function () {
  this.timeout(180_000);
  let server: SecretsServer;
  let dir: string;
  let requests: string[];

  function env(overrides: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
    return withEnv(
      { PATH: process.env.PATH, HOME: process.env.HOME, SECRETS_ADDR: server.url, SECRETS_TOKEN: server.rootToken, GANTRY_LOG: 'warn' },
      overrides,
    );
  }
  function gantry(args: string[], options: { stdin?: string | Buffer; env?: Record<string, string | undefined> } = {}): Promise<Ran> {
    if (Buffer.isBuffer(options.stdin)) return runWithBytes(args, options.stdin, env(options.env));
    return runNode([bin, 'secrets', ...args], {
      env: env(options.env),
      cwd: dir,
      ...(options.stdin === undefined ? {} : { stdin: options.stdin }),
    });
  }
  function runWithBytes(args: string[], stdin: Buffer, environment: NodeJS.ProcessEnv): Promise<Ran> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [bin, 'secrets', ...args], { env: environment, cwd: dir });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
      child.stdin.end(stdin);
    });
  }
  /** Runs `check` and asserts that it sent nothing to the service. */
  async function sendsNothing<T>(what: string, check: () => Promise<T>): Promise<T> {
    const before = requests.length;
    const result = await check();
    assert.deepEqual(requests.slice(before), [], `${what}: nothing may be sent`);
    return result;
  }

  before(async () => {
    requests = [];
    server = await startSecretsServer({ log: (line) => requests.push(line) });
    dir = await mkdtemp(join(tmpdir(), 'gantry-secrets-classes-'));
  });
  after(async () => {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  });

  describe('binary values are refused or base64-encoded by --base64, never mangled', () => {
    const bytes = Buffer.from([0x00, 0xff, 0xfe, 0x80, 0x41, 0x0a, 0xc3, 0x28, 0xef, 0xbb, 0xbf, 0x0a]);

    it('key=@file and key=- with binary bytes exit 2 naming the file or stdin and --base64; nothing is sent', async () => {
      await writeFile(join(dir, 'bin.dat'), bytes);
      for (const [args, stdin, where] of [
        [['put', 'secret/app/eq', 'bin=@bin.dat'], undefined, /bin\.dat \(the value of "bin"\) is binary, not UTF-8 text/],
        [['put', 'secret/app/eq', 'bin=-'], bytes, /stdin \(the value of "bin"\) is binary/],
        [['patch', 'secret/app/eq', 'bin=@bin.dat'], undefined, /bin\.dat \(the value of "bin"\) is binary/],
        [['put', 'secret/app/eq', '@bin.dat'], undefined, /bin\.dat is binary/],
        [['put', 'secret/app/eq', '-'], bytes, /stdin is binary/],
      ] as const) {
        const run = await sendsNothing(args.join(' '), () => gantry([...args], stdin ? { stdin } : {}));
        assert.equal(run.code, 2, run.stderr);
        assert.match(run.stderr, where);
        assert.match(run.stderr, /nothing was sent/);
        assert.match(run.stderr, /--base64/);
      }
      // Bytes that were not UTF-8 on the command line reach node as U+FFFD: refused rather than stored so.
      const argv = await sendsNothing('k=\uFFFD', () => gantry(['put', 'secret/app/eq', 'k=a\uFFFDb']));
      assert.equal(argv.code, 2, argv.stderr);
      assert.match(argv.stderr, /U\+FFFD/);
    });

    it('--base64 stores the exact bytes (file and stdin, no newline dropped), read back by --field and by node-vault', async () => {
      const put = await gantry(['put', '--base64', 'secret/app/eq', 'bin=@bin.dat']);
      assert.equal(put.code, 0, put.stderr);
      const field = await gantry(['get', 'secret/app/eq', '--field', 'bin']);
      assert.deepEqual(Buffer.from(field.stdout, 'base64'), bytes, 'the raw value for `| base64 -d`');
      const piped = await gantry(['put', '--base64', 'secret/app/eq2', 'bin=-'], { stdin: bytes });
      assert.equal(piped.code, 0, piped.stderr);
      const client = vault({
        endpoint: server.url,
        token: server.rootToken,
        requestOptions: { headers: { 'X-Secrets-Token': server.rootToken, 'X-Secrets-Request': 'true' } },
      });
      const read = (await client.read('secret/data/app/eq2')) as { data: { data: { bin: string } } };
      assert.deepEqual(Buffer.from(read.data.data.bin, 'base64'), bytes);
      // A text file with a byte order mark is text: kept exactly, not stripped.
      await writeFile(join(dir, 'bom.txt'), '\uFEFFtext');
      assert.equal((await gantry(['put', 'secret/app/bom', 'v=@bom.txt'])).code, 0);
      assert.equal((await gantry(['get', 'secret/app/bom', '--field', 'v'])).stdout, '\uFEFFtext');
      const pointless = await sendsNothing('--base64 alone', () => gantry(['put', '--base64', 'secret/app/eq', 'a=b']));
      assert.equal(pointless.code, 2);
      assert.match(pointless.stderr, /--base64 encodes key=@file and key=- values/);
    });

    it('the library and KvSecret refuse Buffer and typed-array values by key', async () => {
      const client = new SecretsClient({ address: server.url, token: server.rootToken });
      try {
        const kv = client.kv('secret', { kvVersion: 2 });
        await sendsNothing('library Buffer', () =>
          assert.rejects(
            kv.write('app/lib', { cert: bytes }),
            (e: unknown) => e instanceof UsageError && /at \/cert is binary/.test(e.message) && e.code === 'SECRETS_BINARY_VALUE',
          ),
        );
        await assert.rejects(kv.patch('app/lib', { nested: { raw: new Uint8Array(2) } }), /at \/nested\/raw is binary/);
      } finally {
        client.close();
      }
      const checked = await kvSecretOperations.check({}, { mount: 'secret', path: 'app/p', data: { cert: bytes } });
      assert.deepEqual(
        (checked.failures ?? []).map((f) => f.property),
        ['data'],
      );
    });
  });

  describe('parse errors of secret material never quote it', () => {
    const canary = 's3cr3tCanary77';
    /** Neither the value nor any 5-character piece of it. */
    const quotesNothing = (text: string, what: string) => {
      for (let i = 0; i + 5 <= canary.length; i++) assert.ok(!text.includes(canary.slice(i, i + 5)), `${what} quotes "${canary.slice(i, i + 5)}": ${text}`);
    };

    it('value files and stdin that are not JSON, or not key=value, are described by position, never shown', async () => {
      await writeFile(join(dir, 'pw.txt'), `${canary}\n`);
      await writeFile(join(dir, 'cut.json'), `{"user": "app",\n "password": "${canary}`);
      await writeFile(join(dir, 'escape.json'), `{"password": "${canary}\\q"}`);
      await writeFile(join(dir, 'array.json'), `["${canary}"]`);
      for (const [args, stdin, said] of [
        [['put', 'secret/app/x', '@pw.txt'], undefined, /pw\.txt is not valid JSON: line 1, column 1: expected a JSON value.*found a letter/],
        [['put', 'secret/app/x', '-'], `${canary}\n`, /stdin is not valid JSON: line 1, column 1/],
        [['patch', 'secret/app/x', '-'], `{"k": ${canary}}`, /stdin is not valid JSON: line 1, column 7/],
        [
          ['put', 'secret/app/x', '@cut.json'],
          undefined,
          /cut\.json is not valid JSON: line 2, column 29: expected the closing '"' of the string that starts at line 2, column 14/,
        ],
        [['put', 'secret/app/x', '@escape.json'], undefined, /escape\.json is not valid JSON: line 1, column 30: expected an escape/],
        [['put', 'secret/app/x', '@array.json'], undefined, /array\.json must hold a JSON object of keys and values, not an array/],
        [['put', 'secret/app/x', canary], undefined, /data argument 1 is not key=value.*not shown/],
        [['put', 'secret/app/x', 'user=app', canary], undefined, /data argument 2 is not key=value/],
      ] as const) {
        const run = await sendsNothing(args.join(' '), () => gantry([...args], stdin ? { stdin } : {}));
        assert.equal(run.code, 2, run.stderr);
        assert.match(run.stderr, said);
        quotesNothing(run.stdout + run.stderr, args.join(' '));
        assert.doesNotMatch(run.stderr, /\[REDACTED\]/, 'the hint shows a usable example, not a masked one');
      }
    });

    it('a success answer that is not JSON (a read cut short) is described, not quoted; so is a corrupt data file of the dev server', async () => {
      const peer = await startScriptedPeer(() => ({ status: 200, raw: `{"data": {"data": {"password": "${canary}` }));
      const client = new SecretsClient({ address: peer.url, token: 'hvs.peer-token', maxRetries: 0 });
      try {
        await assert.rejects(client.kv('secret', { kvVersion: 2 }).read('app/db'), (e: unknown) => {
          assert.ok(e instanceof SecretsError && e.code === 'SECRETS_PROTOCOL', String(e));
          assert.match(e.message, /is not JSON: line 1, column \d+: expected the closing '"'/);
          quotesNothing(`${e.message} ${e.hint ?? ''} ${e.stack ?? ''}`, 'protocol error');
          return true;
        });
      } finally {
        client.close();
        await peer.close();
      }
      const file = join(dir, 'broken-data.json');
      await writeFile(file, `{"kv": {"password": "${canary}"`);
      await assert.rejects(startSecretsServer({ dataFile: file }), (e: Error) => {
        assert.match(e.message, /not valid JSON \(line 1, column \d+: expected/);
        quotesNothing(e.message, 'data file');
        return true;
      });
    });
  });

  describe('exit codes: a definite no is 1, bad input is 2 found before sending, 0 success', () => {
    it('a check-and-set conflict, and a write without cas where one is required, exit 1 with a hint naming --cas', async () => {
      assert.equal((await gantry(['put', 'secret/app/cas', 'a=1'])).code, 0);
      const stale = await gantry(['put', 'secret/app/cas', '--cas', '5', 'a=2']);
      assert.equal(stale.code, 1, stale.stderr);
      assert.match(stale.stderr, /check-and-set/);
      assert.match(stale.stderr, /hint: secret\/app\/cas is not at version 5.*gantry secrets meta get secret\/app\/cas.*--cas <version>/);
      const exists = await gantry(['patch', 'secret/app/cas', '--cas', '0', 'a=2']);
      assert.equal(exists.code, 1, exists.stderr);
      assert.equal((await gantry(['meta', 'put', 'secret/app/cas', '--cas-required', 'true'])).code, 0);
      const required = await gantry(['put', 'secret/app/cas', 'a=3']);
      assert.equal(required.code, 1, required.stderr);
      assert.match(required.stderr, /requires check-and-set.*--cas <version>/);
    });

    it("durations are checked as the service reads them (Vault's ParseDurationSecond) before sending", async () => {
      for (const bad of ['3x', '1d12h', '1 h', 'h', '', '1.5d', '99999999999h']) {
        for (const verb of [
          ['meta', 'put', 'secret/app/cas'],
          ['config', 'put', 'secret'],
        ]) {
          const run = await sendsNothing(`${verb.join(' ')} ${bad}`, () => gantry([...verb, '--delete-version-after', bad]));
          assert.equal(run.code, 2, `${bad}: ${run.stderr}`);
          assert.match(run.stderr, /--delete-version-after must be a duration such as/);
        }
      }
      for (const good of ['0', '3600', '30s', '1h30m', '1.5h', '768h', '7d', '500ms']) {
        const run = await gantry(['meta', 'put', 'secret/app/cas', '--delete-version-after', good]);
        assert.equal(run.code, 0, `${good}: ${run.stderr}`);
      }
      const client = new SecretsClient({ address: server.url, token: server.rootToken });
      try {
        await sendsNothing('library', () =>
          assert.rejects(
            client.kv('secret', { kvVersion: 2 }).writeMetadata('app/cas', { deleteVersionAfter: '3x' }),
            (e: unknown) => e instanceof UsageError && /deleteVersionAfter must be a duration/.test(e.message),
          ),
        );
      } finally {
        client.close();
      }
    });

    it('every number flag is digits only and in range; checked before sending', async () => {
      for (const args of [
        ['meta', 'put', 'secret/app/cas', '--max-versions', '-1'],
        ['meta', 'put', 'secret/app/cas', '--max-versions', '1e3'],
        ['config', 'put', 'secret', '--max-versions', '0x10'],
        ['put', 'secret/app/cas', '--cas', 'x', 'a=1'],
        ['put', 'secret/app/cas', '--cas', ' 1', 'a=1'],
        ['get', 'secret/app/cas', '--version', '0'],
        ['get', 'secret/app/cas', '--version', '1.5'],
        ['rm', 'secret/app/cas', '--versions', '1,,2'],
        ['undelete', 'secret/app/cas', '--versions', 'all'],
        ['destroy', 'secret/app/cas', '--versions', '99999999999999999999'],
        ['get', 'secret/app/cas', '--kv-version', '3'],
        ['--max-retries', 'two', 'get', 'secret/app/cas'],
        ['--timeout', '3x', 'get', 'secret/app/cas'],
        ['--max-json-depth', '0', 'get', 'secret/app/cas'],
      ]) {
        const run = await sendsNothing(args.join(' '), () => gantry(args));
        assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
        assert.match(run.stderr, /^error: --[a-z-]+ must be/m, run.stderr);
      }
    });

    it('value files that are folders, missing or unreadable exit 2 naming the file; nothing is sent', async () => {
      await mkdir(join(dir, 'folder'), { recursive: true });
      for (const [arg, said] of [
        ['password=@/etc', /cannot read \/etc: it is a folder, not a file/],
        ['password=@folder', /cannot read folder: it is a folder/],
        ['password=@missing.txt', /cannot read missing\.txt: there is no such file/],
        ['@missing.json', /cannot read missing\.json: there is no such file/],
        ['password=@pw.txt/inside', /cannot read pw\.txt\/inside: a part of the path is not a folder/],
      ] as const) {
        const run = await sendsNothing(arg, () => gantry(['put', 'secret/app/f', arg]));
        assert.equal(run.code, 2, run.stderr);
        assert.match(run.stderr, said);
      }
      // Root reads every file, so as root the command runs as nobody (uid 65534) in a folder it may enter.
      const asRoot = process.getuid?.() === 0;
      const where = asRoot ? await mkdtemp(join(tmpdir(), 'gantry-eacces-')) : dir;
      if (asRoot) await chmod(where, 0o755);
      await writeFile(join(where, 'locked.txt'), 'x');
      await chmod(join(where, 'locked.txt'), 0o000);
      const locked = await sendsNothing(
        'EACCES',
        () =>
          new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
            const child = spawn(process.execPath, [bin, 'secrets', 'put', 'secret/app/f', 'password=@locked.txt'], {
              cwd: where,
              env: { PATH: process.env.PATH, HOME: tmpdir(), SECRETS_ADDR: server.url, SECRETS_TOKEN: 'eacces-token' },
              ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
            });
            let stderr = '';
            child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
            child.on('error', reject);
            child.on('close', (code) => resolve({ code, stderr }));
          }),
      );
      if (asRoot) await rm(where, { recursive: true, force: true });
      assert.equal(locked.code, 2, locked.stderr);
      assert.match(locked.stderr, /cannot read locked\.txt: permission denied/);
    });
  });

  describe("help <command> shows the command's help, in every group; it sends nothing", () => {
    it('secrets help <each command>, help meta put, meta help put, config help get, login help userpass, and help alone', async () => {
      const commands = ['get', 'put', 'patch', 'list', 'rm', 'undelete', 'destroy', 'meta', 'config', 'mounts', 'login', 'help'];
      for (const words of [
        ...commands.map((c) => ['help', c]),
        ['help', 'ls'],
        ['help', 'meta', 'put'],
        ['help', 'login', 'approle'],
        ['meta', 'help', 'put'],
        ['config', 'help', 'get'],
        ['login', 'help', 'userpass'],
      ]) {
        const run = await sendsNothing(words.join(' '), () => gantry(words));
        assert.equal(run.code, 0, `${words.join(' ')}: ${run.stderr}`);
        const named = words.filter((w) => w !== 'help').map((w) => (w === 'ls' ? 'list' : w));
        assert.match(run.stdout, new RegExp(`^Usage: gantry secrets ${named.join(' ')}\\b`), `${words.join(' ')}: ${run.stdout}`);
      }
      const alone = await sendsNothing('help', () => gantry(['help']));
      assert.match(alone.stdout, /^Usage: gantry secrets \[options\] \[command\]/);
      const extra = await sendsNothing('help put extra', () => gantry(['help', 'put', 'extra']));
      assert.equal(extra.code, 2);
      assert.match(extra.stderr, /put has no sub-commands/);
      // A path is still the service's help.
      const path = await gantry(['help', 'secret/']);
      assert.equal(path.code, 0, path.stderr);
      assert.match(path.stdout, /Paths \(relative to secret\/\)/);
    });
  });

  describe('hints speak to the face that shows them, with usable examples', () => {
    const terminalWords =
      /in code|`token` option|option \w|client\.mounts|kvVersion|\[REDACTED\]|\*\*\*\*|secrets list to list|gantry secrets list <mount>\/\)/;

    it("the command's errors hint flags, environment and gantry commands; mounts are listed by `secrets mounts`", async () => {
      const cases: Array<[string[], Record<string, string | undefined>, RegExp]> = [
        [
          ['get', 'secret/app/db'],
          { SECRETS_TOKEN: '' },
          /hint: Set SECRETS_TOKEN \(export SECRETS_TOKEN=<token>\), or log in: `gantry secrets login userpass --username <name>`/,
        ],
        [['get', 'nomount/x'], {}, /`gantry secrets mounts` lists those the token may see.*--kv-version 1\|2/],
        [['help', 'nothing/here'], {}, /`gantry secrets mounts` lists the mounts/],
        [
          ['get', 'secret/app/db', '--kv-version', '2'],
          { SECRETS_ADDR: 'http://127.0.0.1:9' },
          /hint: Check the address \(SECRETS_ADDR, or --address in gantry secrets\)/,
        ],
        [['login', 'userpass', '--username', 'nobody'], { SECRETS_TOKEN: undefined }, /--path/],
        [['--max-json-depth', '2', 'put', 'secret/app/deep', '-'], {}, /--max-json-depth <n> or SECRETS_MAX_JSON_DEPTH/],
      ];
      for (const [args, overrides, hint] of cases) {
        const run = await gantry(args, { env: overrides, ...(args.includes('-') ? { stdin: '{"a": {"b": {"c": "d"}}}' } : { stdin: 'wrong-password' }) });
        assert.notEqual(run.code, 0, args.join(' '));
        assert.match(run.stderr, hint, run.stderr);
        assert.doesNotMatch(run.stderr, terminalWords, `${args.join(' ')}: ${run.stderr}`);
      }
      const mounts = await gantry(['mounts']);
      assert.equal(mounts.code, 0, mounts.stderr);
      assert.match(mounts.stdout, /^secret\/\s+kv\s+kv v2/m);
      assert.match(mounts.stdout, /^kv\/\s+kv\s+kv v1/m);
      const json = JSON.parse((await gantry(['--json', 'mounts'])).stdout) as Array<{ path: string; kvVersion: number }>;
      assert.deepEqual(
        json.filter((m) => m.path === 'secret/').map((m) => m.kvVersion),
        [2],
      );
    });

    it("the library's hints speak of options and methods, never of flags; client.mounts() works for a token without sys/mounts", async () => {
      const none = new SecretsClient({ address: server.url, sources: { env: {}, pulumi: undefined } });
      await assert.rejects(
        none.kv('secret').read('app/db'),
        (e: UsageError) =>
          /the `token` option/.test(e.hint ?? '') &&
          !/gantry secrets/.test(e.hint ?? '') &&
          /gantry secrets login/.test((e as unknown as { cliHint: string }).cliHint),
      );
      none.close();
      const root = new SecretsClient({ address: server.url, token: server.rootToken });
      const token = (await root.write<unknown>('auth/token/create', { policies: ['reader'] })).envelope as unknown as { auth: { client_token: string } };
      await root.write('sys/policies/acl/reader', { policy: 'path "secret/data/app/*" { capabilities = ["read"] }' });
      root.close();
      const reader = new SecretsClient({ address: server.url, token: token.auth.client_token });
      try {
        const mounts = await reader.mounts();
        assert.ok(
          mounts.some((m) => m.path === 'secret/' && m.kvVersion === 2),
          JSON.stringify(mounts),
        );
        await assert.rejects(
          reader.kv('nomount').read('x'),
          (e: SecretsError) => /client\.mounts\(\)/.test(e.hint ?? '') && !/--kv-version|gantry /.test(e.hint ?? ''),
        );
      } finally {
        reader.close();
      }
    });

    it('an address that is a port, or a host and port, is said to be so; a long non-URL is described without its value', async () => {
      const port = await gantry(['get', 'secret/app/db'], { env: { SECRETS_ADDR: '8200' } });
      assert.equal(port.code, 2);
      assert.match(port.stderr, /SECRETS_ADDR is "8200", a port number alone, not an address: give the scheme and host too, e.g. http:\/\/127\.0\.0\.1:8200/);
      assert.doesNotMatch(port.stderr, /no scheme/);
      const hostPort = await gantry(['--address', 'vault.example:8200', 'get', 'secret/app/db']);
      assert.match(hostPort.stderr, /--address is "vault\.example:8200", a host and port without a scheme: write https:\/\/vault\.example:8200/);
      const pasted = await gantry(['get', 'secret/app/db'], { env: { SECRETS_ADDR: 'hvs.AAAAAAAAAAAAAAAAAAAAAAAA' } });
      assert.match(pasted.stderr, /SECRETS_ADDR is not a URL: a value of 28 characters \(not shown\)/);
      assert.ok(!pasted.stderr.includes('AAAAAAAA'));
    });
  });

  describe('raw values for a pipe: no newline added unless stdout is a terminal', () => {
    it('--field and login --token-only print the value alone; mask() counts "1 char"', async () => {
      await gantry(['put', 'secret/app/raw', 'one=x', 'multi=a\nb\n']);
      assert.equal((await gantry(['get', 'secret/app/raw', '--field', 'one'])).stdout, 'x');
      assert.equal((await gantry(['get', 'secret/app/raw', '--field', 'multi'])).stdout, 'a\nb\n', "the value's own newlines are kept");
      const token = await gantry(['login', '--token-only', 'token'], { stdin: `${server.rootToken}\n`, env: { SECRETS_TOKEN: undefined } });
      assert.equal(token.stdout, server.rootToken);
      assert.equal(mask('x'), '<hidden, 1 char>');
      assert.equal(mask(''), '<hidden, 0 chars>');
      assert.match((await gantry(['get', 'secret/app/raw'])).stdout, /one\s+<hidden, 1 char>$/m);
    });
  });

  describe('a closed pipe ends the command quietly', () => {
    it('`gantry --json secrets get <big secret> | head -1`: exit 0, no EPIPE, no stack', async () => {
      const big = 'v'.repeat(600_000);
      await gantry(['put', 'secret/app/big', '-'], { stdin: JSON.stringify({ a: big, b: big, c: big }) });
      for (const args of [
        ['--json', 'secrets', 'get', 'secret/app/big'],
        ['secrets', 'get', 'secret/app/big', '--field', 'a'],
        ['secrets', 'get', 'secret/app/big', '--reveal'],
      ]) {
        const { code, first, stderr } = await new Promise<{ code: number | null; first: string; stderr: string }>((resolve, reject) => {
          const child = spawn(process.execPath, [bin, ...args], { env: env(), cwd: dir });
          let out = '';
          let err = '';
          let first = '';
          child.stdout.on('data', (chunk: Buffer) => {
            out += chunk.toString();
            // The reader takes its first line (or first 64 KiB) and goes away, as `head -1` does.
            if (!first && (out.includes('\n') || out.length > 65_536)) {
              first = out.split('\n')[0]!.slice(0, 80);
              child.stdout.destroy();
            }
          });
          child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
          child.on('error', reject);
          child.on('close', (exit) => resolve({ code: exit, first, stderr: err }));
        });
        assert.equal(code, 0, `${args.join(' ')}: ${stderr}`);
        assert.ok(first.length > 0, 'the reader got its first line');
        assert.doesNotMatch(stderr, /EPIPE|ERR_STREAM_DESTROYED|\n\s+at /, stderr);
      }
    });
  });
  describe('messages name each thing once, in the right number, with the right story (class: "versions 1", "(version 1)" twice, cas 0 "written since")', () => {
    it('destroy and undelete say "version 1" and "versions 2, 3"; a destroyed version read back names it once', async () => {
      for (const value of ['a=1', 'a=2', 'a=3']) assert.equal((await gantry(['put', 'secret/app/one', value])).code, 0);
      const one = await gantry(['destroy', 'secret/app/one', '--versions', '1']);
      assert.equal(one.code, 0, one.stderr);
      assert.match(one.stdout, /^Success! Destroyed version 1 of secret\/app\/one$/m);
      const two = await gantry(['destroy', 'secret/app/one', '--versions', '2,3']);
      assert.match(two.stdout, /^Success! Destroyed versions 2, 3 of secret\/app\/one$/m);
      const undeleted = await gantry(['undelete', 'secret/app/one', '--versions', '3']);
      assert.match(undeleted.stdout, /^Success! Undeleted version 3 of secret\/app\/one$/m);
      const read = await gantry(['get', 'secret/app/one', '--version', '1']);
      assert.equal(read.code, 1);
      assert.match(read.stderr, /^error: version 1 of secret\/app\/one was destroyed; its data is gone$/m);
      const latest = await gantry(['get', 'secret/app/one']);
      assert.match(latest.stderr, /^error: secret\/app\/one was destroyed \(version 3\); its data is gone$/m, 'without --version the version is named once');
    });

    it('--cas 0 on a key that exists says it exists and what --cas 0 means, not "someone wrote it since"', async () => {
      assert.equal((await gantry(['put', 'secret/app/exists', 'a=1'])).code, 0);
      for (const verb of ['put', 'patch']) {
        const run = await gantry([verb, 'secret/app/exists', 'a=2', '--cas', '0']);
        assert.equal(run.code, 1, run.stderr);
        assert.match(run.stderr, /hint: secret\/app\/exists already exists; --cas 0 writes only a new key/);
        assert.doesNotMatch(run.stderr, /someone wrote it since|not at version 0/);
      }
    });
  });

  describe('paths and values with control characters are shown escaped in messages (class: a raw newline in an error)', () => {
    it('secrets, modules and gate arguments holding a newline, a tab or an escape are escaped JSON-style; every line of stderr is an error or a hint', async () => {
      const runs: Array<[string[], string]> = [
        [['secrets', 'get', 'secret/app/d\nb'], 'secret/app/d\\nb'],
        [['secrets', 'put', 'secret/app/t\tb', 'a=1'], 'secret/app/t\\tb'],
        [['secrets', 'get', 'secret/app/e\u001b[31mb'], 'secret/app/e\\u001b[31mb'],
        [['modules', 'pin', '--file', 'a\nb.json'], 'a\\nb.json'],
        [['gate', '--config', 'c\nfg.json'], 'c\\nfg.json'],
      ];
      for (const [args, escaped] of runs) {
        const run = await runNode([bin, ...args], { env: env(), cwd: dir });
        assert.equal(run.code, 2, `${JSON.stringify(args)}: ${run.stderr}`);
        assert.ok(run.stderr.includes(escaped), `${JSON.stringify(args)} shows ${escaped}: ${run.stderr}`);
        for (const line of run.stderr.split('\n').filter(Boolean))
          assert.match(line, /^(error|hint): /, `${JSON.stringify(args)}: a raw control character broke the message: ${JSON.stringify(run.stderr)}`);
        // eslint-disable-next-line no-control-regex -- finding control characters is the point
        assert.doesNotMatch(run.stderr.replace(/\n/g, ''), /[\u0000-\u001f]/, JSON.stringify(run.stderr));
      }
    });
  });
});
