// Text from a server reaches the terminal escaped (TERM-REMOTE-TEXT): the built command in its own process, against
// real servers on loopback holding hostile values — a storage title with an OSC title sequence, a screen clear and a
// colour, a title with a line break and a right-to-left override; a registry module's description; a kv secret's
// key; a platform API's text body and error message; a context server's tool description and tool result; a secrets
// service's health answer read by doctor; a webhook payload's action in the delivery log. No raw ESC, BEL, CR or
// bidi control reaches stdout or stderr, and a table row stays one line.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { startOAuthServer } from '../../devserver/oauth/index.js';
import { startSecretsServer, type SecretsServer } from '../../devserver/secrets/index.js';
import type { RegistryServer } from '../../devserver/registry/index.js';
import { silentLogger } from '../../lib/log.js';
import { startContextServer, type ContextServer, type ToolDefinition } from '../../lib/mcp/server/index.js';
import { createStorageTransport } from '../../lib/storage/transport.js';
import { upload } from '../../lib/storage/upload/index.js';
import { harness, TOKEN, type Harness } from '../devserver/storage/helpers.js';
import { runBuiltGantry } from './gantry-process.js';
import { startRegistry, writeModules } from '../registry/fixtures.js';

const bin = fileURLToPath(new URL('../../dist/lib/cli/main.js', import.meta.url));
const HOSTILE = 'evil\u001b]0;pwned\u0007\u001b[2J\u001b[31mRED';
/** How the terminal shows HOSTILE: every control as its JSON escape, the printable rest as it is. */
const SHOWN = 'evil\\u001b]0;pwned\\u0007\\u001b[2J\\u001b[31mRED';
const SPLIT = 'two\nlines\u202etxt.exe';
const SPLIT_SHOWN = 'two\\nlines\\u202etxt.exe';
/** Anything a terminal acts on, or that hides text, but the line feed that ends each line. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]/;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const gantry = (args: string[], env: Record<string, string>, cwd?: string): Promise<Run> => runBuiltGantry(args, env, cwd ? { cwd } : {});

/** Nothing in either stream the terminal would act on. */
function assertTerminalSafe(run: Run, what: string): void {
  for (const [name, text] of [
    ['stdout', run.stdout],
    ['stderr', run.stderr],
  ] as const) {
    const found = UNSAFE.exec(text);
    assert.equal(found, null, `${what}: ${name} holds U+${found?.[0].charCodeAt(0).toString(16).padStart(4, '0')}: ${JSON.stringify(text)}`);
  }
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('TERM-REMOTE-TEXT: text from a server reaches the terminal escaped, in every group (the command against real servers)', function () {
  this.timeout(180_000);
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gantry-remote-text-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  describe('storage', () => {
    let h: Harness;
    let evilId: string;
    const env = (): Record<string, string> => ({
      HOME: join(dir, 'home'),
      XDG_STATE_HOME: join(dir, 'state'),
      GANTRY_CONFIG_DIR: join(dir, 'config'),
      STORAGE_BASE_URL: h.server.url,
      STORAGE_TOKEN: TOKEN,
    });

    before(async () => {
      await Promise.all(['home', 'state', 'config', 'work'].map((name) => mkdir(join(dir, name), { recursive: true })));
      h = await harness();
      const transport = createStorageTransport({ baseUrl: h.server.url, token: TOKEN });
      evilId = (await upload(transport, { source: Buffer.from('hello'), metadata: { title: HOSTILE } })).id;
      assert.equal((await h.api('POST', '/storage/v2/files', { title: SPLIT })).status, 200);
    });
    after(async () => {
      await h?.close();
    });

    it('TERM-REMOTE-TEXT: storage ls shows a title with escape sequences and one with a line break escaped, a row per file', async () => {
      const run = await gantry(['storage', 'ls'], env());
      assert.equal(run.code, 0, run.stderr);
      assertTerminalSafe(run, 'storage ls');
      const lines = run.stdout.trimEnd().split('\n');
      assert.equal(lines.length, 3, `a header and one row per file:\n${run.stdout}`);
      assert.ok(
        lines.some((line) => line.startsWith(evilId) && line.includes(SHOWN)),
        run.stdout,
      );
      assert.ok(
        lines.some((line) => line.includes(SPLIT_SHOWN)),
        run.stdout,
      );
    });

    it('TERM-REMOTE-TEXT: storage changes keeps each change on one row', async () => {
      const run = await gantry(['storage', 'changes'], env());
      assert.equal(run.code, 0, run.stderr);
      assertTerminalSafe(run, 'storage changes');
      assert.ok(run.stdout.includes(SHOWN) && run.stdout.includes(SPLIT_SHOWN), run.stdout);
      assert.ok(!run.stdout.split('\n').some((line) => line.startsWith('lines')), `no row split by the title's line break:\n${run.stdout}`);
    });

    it('TERM-REMOTE-TEXT: storage get says "Downloaded …" with the title escaped, and writes the bytes unchanged', async () => {
      const run = await gantry(['storage', 'get', evilId, '-o', join(dir, 'work', 'copy.txt')], env(), join(dir, 'work'));
      assert.equal(run.code, 0, run.stderr);
      assertTerminalSafe(run, 'storage get');
      assert.match(run.stdout, new RegExp(`^Downloaded ${SHOWN.replace(/[\\[\]]/g, '\\$&')} \\(${evilId}\\) to `));
      assert.equal(await readFile(join(dir, 'work', 'copy.txt'), 'utf8'), 'hello', "the bytes are the file's, unchanged");
    });

    it('TERM-REMOTE-TEXT: storage trash and the trash listing show the title escaped', async () => {
      const trashed = await gantry(['storage', 'trash', evilId], env());
      assert.equal(trashed.code, 0, trashed.stderr);
      assertTerminalSafe(trashed, 'storage trash');
      assert.ok(trashed.stdout.startsWith(`Trashed ${SHOWN} (${evilId})`), trashed.stdout);
      const listed = await gantry(['storage', 'ls', '--trashed'], env());
      assert.equal(listed.code, 0, listed.stderr);
      assertTerminalSafe(listed, 'storage ls --trashed');
      assert.equal(listed.stdout.trimEnd().split('\n').length, 2, listed.stdout);
      assert.ok(listed.stdout.includes(SHOWN), listed.stdout);
      // --json is the same document, every control escaped by JSON.
      const json = await gantry(['storage', 'ls', '--trashed', '--json'], env());
      assertTerminalSafe(json, 'storage ls --trashed --json');
      assert.equal(JSON.parse(json.stdout.trim()).title, HOSTILE);
    });

    it('TERM-REMOTE-TEXT: storage get names the file it writes from the title with controls and bidi overrides replaced by _', async () => {
      const transport = createStorageTransport({ baseUrl: h.server.url, token: TOKEN });
      const { id } = await upload(transport, { source: Buffer.from('pdf?'), metadata: { title: 'invoice\u202efdp.exe\u0007' } });
      const folder = join(dir, 'work', 'named');
      await mkdir(folder);
      const run = await gantry(['storage', 'get', id], env(), folder);
      assert.equal(run.code, 0, run.stderr);
      assertTerminalSafe(run, 'storage get (name from the title)');
      assert.deepEqual(await readdir(folder), ['invoice_fdp.exe_']);
      assert.ok(run.stdout.startsWith(`Downloaded invoice\\u202efdp.exe\\u0007 (${id}) to `), run.stdout);
    });
  });

  it('TERM-REMOTE-TEXT: auth login, status and whoami show an account name from the authorization server escaped', async () => {
    const email = `dev${HOSTILE}@gantry.test`;
    const server = await startOAuthServer({ host: '127.0.0.1', port: 0, interval: 1, users: [{ username: 'dev', email, name: `Dev\n${HOSTILE}` }] });
    try {
      const client = server.registerClient({ name: 'remote text' });
      const env = {
        GANTRY_CONFIG_DIR: join(dir, 'auth-config'),
        HOME: join(dir, 'home'),
        GANTRY_AUTH_URL: server.url,
        GANTRY_OAUTH_CLIENT_ID: client.id,
        GANTRY_OAUTH_CLIENT_SECRET: client.secret!,
        GANTRY_API_URL: server.url,
      };
      const login = await new Promise<Run>((resolve, reject) => {
        const child = spawn(process.execPath, [bin, 'auth', 'login', '--store', 'file', '--insecure-storage', '--scope', 'openid,email,video.readonly'], {
          env: { PATH: process.env.PATH ?? '', GANTRY_LOG: 'warn', ...env },
        });
        let stdout = '';
        let stderr = '';
        let approved = false;
        child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
        child.stderr.on('data', (c: Buffer) => {
          stderr += c.toString();
          const code = /\b([A-Z]{4}-[A-Z]{4})\b/.exec(stderr)?.[1];
          if (code && !approved) {
            approved = true;
            setTimeout(() => server.approve(code), 300).unref();
          }
        });
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      });
      assert.equal(login.code, 0, login.stderr);
      assertTerminalSafe(login, 'auth login');
      assert.ok(login.stdout.includes(`as dev${SHOWN}@gantry.test`), login.stdout);
      for (const args of [
        ['auth', 'status', '--offline'],
        ['auth', 'whoami'],
      ]) {
        const run = await gantry(args, env);
        assertTerminalSafe(run, args.join(' '));
        assert.ok(run.stdout.includes(`dev${SHOWN}@gantry.test`), `${args.join(' ')}: ${run.stdout}${run.stderr}`);
        assert.ok(!run.stdout.split('\n').some((line) => line.startsWith('evil')), `no line split by the name's line break: ${run.stdout}`);
      }
    } finally {
      await server.stop();
    }
  });

  describe('modules, secrets, platform, mcp, doctor, hooks', () => {
    let registry: RegistryServer;
    let kv: SecretsServer;
    let hostile: Server;
    let hostileUrl: string;
    let context: ContextServer;

    before(async () => {
      await writeModules(join(dir, 'registry'), [
        { namespace: 'acme', name: 'evil', provider: 'aws', versions: ['1.0.0'], description: `${HOSTILE}\nsecond line` },
      ]);
      registry = await startRegistry(join(dir, 'registry'));
      kv = await startSecretsServer({});
      const written = await fetch(`${kv.url}/v1/secret/data/app/db`, {
        method: 'POST',
        headers: { 'x-secrets-token': kv.rootToken, 'content-type': 'application/json' },
        body: JSON.stringify({ data: { [HOSTILE]: 'v', 'multi\nline': `${HOSTILE}` } }),
      });
      assert.equal(written.status, 200, await written.text());
      // A platform API, a secrets service's health endpoint: answers a hostile server would give.
      hostile = createServer((request, response) => {
        if (request.url?.startsWith('/text')) {
          response.writeHead(200, { 'content-type': 'text/plain' });
          response.end(`first line\n${HOSTILE}\rOVERWRITTEN\u202e`);
        } else if (request.url?.startsWith('/repos/o/r/statuses/')) {
          response.writeHead(201, { 'content-type': 'application/json' });
          response.end(JSON.stringify({ id: 1, state: `${HOSTILE}\nsecond line`, context: 'ci' }));
        } else if (request.url?.startsWith('/unprocessable')) {
          response.writeHead(422, { 'content-type': 'application/json' });
          response.end(JSON.stringify({ message: 'Validation Failed', documentation_url: `https://docs.example/${HOSTILE}\nhint: a forged hint` }));
        } else if (request.url?.startsWith('/v1/sys/health')) {
          response.writeHead(200, { 'content-type': 'application/json' });
          response.end(JSON.stringify({ initialized: true, sealed: false, standby: false, version: `${HOSTILE}\nforged row` }));
        } else {
          response.writeHead(404, { 'content-type': 'application/json' });
          response.end(JSON.stringify({ message: `Not Found ${HOSTILE}\nhint: a forged hint` }));
        }
      });
      hostileUrl = await listen(hostile);
      const tool = {
        name: 'modules_resolve',
        title: HOSTILE,
        description: `${HOSTILE}\nsecond line\u202e`,
        scope: 'modules:read',
        readOnly: true,
        input: { source: z.string() },
        async run() {
          return { text: HOSTILE };
        },
      } as unknown as ToolDefinition;
      context = await startContextServer({ auth: false, env: {}, tools: [tool], logger: silentLogger });
    });
    after(async () => {
      await registry?.stop();
      await kv?.stop();
      await context?.stop();
      await new Promise((resolve) => hostile?.close(resolve));
    });

    it("TERM-REMOTE-TEXT: modules search shows a module's description escaped, on its row", async () => {
      const run = await gantry(['modules', 'search', 'evil'], { GANTRY_REGISTRY_HOST: registry.host, GANTRY_CACHE_DIR: join(dir, 'cache') });
      assert.equal(run.code, 0, run.stderr);
      assertTerminalSafe(run, 'modules search');
      const lines = run.stdout.trimEnd().split('\n');
      assert.equal(lines.length, 2, run.stdout);
      assert.ok(lines[1]!.includes(`${SHOWN}\\nsecond`), run.stdout);
    });

    it('TERM-REMOTE-TEXT: secrets get shows keys and values escaped, a row per key; --field stays byte-exact for a pipe', async () => {
      const env = { SECRETS_ADDR: kv.url, SECRETS_TOKEN: kv.rootToken, HOME: join(dir, 'home') };
      const run = await gantry(['secrets', 'get', 'secret/app/db', '--reveal'], env);
      assert.equal(run.code, 0, run.stderr);
      assertTerminalSafe(run, 'secrets get');
      assert.ok(run.stdout.includes(SHOWN), run.stdout);
      assert.ok(
        run.stdout.split('\n').some((line) => line.startsWith('multi\\nline')),
        run.stdout,
      );
      assert.ok(!run.stdout.split('\n').some((line) => line.startsWith('line')), run.stdout);
      const field = await gantry(['secrets', 'get', 'secret/app/db', '--field', 'multi\nline'], env);
      assert.equal(field.code, 0, field.stderr);
      assert.equal(field.stdout, HOSTILE, 'a value asked for with --field comes as it is, for a pipe');
    });

    it("TERM-REMOTE-TEXT: platform api prints a text body escaped (keeping its own line breaks) and a 404's message on its one line", async () => {
      const env = { PLATFORM_API_URL: hostileUrl, GANTRY_PLATFORM_TOKEN: 'a-platform-token-for-the-test', HOME: join(dir, 'home') };
      const text = await gantry(['platform', 'api', '/text'], env);
      assert.equal(text.code, 0, text.stderr);
      assertTerminalSafe(text, 'platform api (text)');
      assert.equal(text.stdout, `first line\n${SHOWN}\\rOVERWRITTEN\\u202e\n`);
      const missing = await gantry(['platform', 'api', '/nothing'], env);
      assert.equal(missing.code, 1, missing.stderr);
      assertTerminalSafe(missing, 'platform api (404)');
      assert.ok(missing.stderr.includes(`${SHOWN}\\nhint: a forged hint`), missing.stderr);
      assert.ok(!missing.stderr.split('\n').includes('hint: a forged hint'), `the service's line break cannot forge a hint line: ${missing.stderr}`);
    });

    it("TERM-REMOTE-TEXT: platform status shows the state the platform answered escaped on its one line; a 422's documentation_url in the hint cannot forge a line", async () => {
      const env = { PLATFORM_API_URL: hostileUrl, GANTRY_PLATFORM_TOKEN: 'a-platform-token-for-the-test', HOME: join(dir, 'home') };
      const status = await gantry(['platform', 'status', 'o/r', '0123456789abcdef0123456789abcdef01234567', '--state', 'success', '--context', 'ci'], env);
      assert.equal(status.code, 0, status.stderr);
      assertTerminalSafe(status, 'platform status');
      assert.equal(status.stdout.trimEnd().split('\n').length, 1, status.stdout);
      assert.ok(status.stdout.includes(`${SHOWN}\\nsecond line for ci on o/r@0123456789ab`), status.stdout);
      const refused = await gantry(['platform', 'api', '/unprocessable'], env);
      assert.equal(refused.code, 1, refused.stderr);
      assertTerminalSafe(refused, 'platform api (422)');
      assert.ok(!refused.stderr.split('\n').includes('hint: a forged hint'), `documentation_url cannot forge a hint line: ${refused.stderr}`);
      assert.match(refused.stderr, /^hint: the platform refused the request's content; see https:\/\/docs\.example\/.*\\nhint: a forged hint$/m);
    });

    it("TERM-REMOTE-TEXT: mcp tools shows a tool's description escaped on its row; mcp call prints a text result escaped", async () => {
      const env = { HOME: join(dir, 'home'), XDG_STATE_HOME: join(dir, 'state'), GANTRY_CONFIG_DIR: join(dir, 'config') };
      const tools = await gantry(['mcp', 'tools', context.url], env);
      assert.equal(tools.code, 0, tools.stderr);
      assertTerminalSafe(tools, 'mcp tools');
      const lines = tools.stdout.trimEnd().split('\n');
      assert.equal(lines.length, 2, tools.stdout);
      assert.ok(lines[1]!.includes(SHOWN), tools.stdout);
      const call = await gantry(['mcp', 'call', context.url, 'modules_resolve', '{"source":"x"}'], env);
      assert.equal(call.code, 0, call.stderr);
      assertTerminalSafe(call, 'mcp call');
      assert.ok(call.stdout.includes(SHOWN), call.stdout);
    });

    it('TERM-REMOTE-TEXT: doctor shows what a secrets service says of itself escaped, its row one line', async () => {
      const run = await gantry(['doctor'], { SECRETS_ADDR: hostileUrl, HOME: join(dir, 'home') });
      assertTerminalSafe(run, 'doctor');
      const row = run.stdout.split('\n').find((line) => line.startsWith('secrets service'));
      assert.ok(row?.includes(`(version ${SHOWN}\\nforged row)`), run.stdout);
      assert.ok(!run.stdout.split('\n').some((line) => line.startsWith('forged row')), run.stdout);
    });

    it('TERM-REMOTE-TEXT: hooks serve writes a delivery whose payload holds escape sequences and a line break as one escaped line', async () => {
      const secret = 'remote text hooks secret';
      const child = spawn(process.execPath, [bin, 'hooks', 'serve', '--port', '0'], {
        env: { PATH: process.env.PATH ?? '', GANTRY_LOG: 'warn', GANTRY_WEBHOOK_SECRET: secret },
        cwd: dir,
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      try {
        const ready = Date.now() + 60_000;
        let url: string | undefined;
        while (!(url = /receiving webhooks on (http:\/\/127\.0\.0\.1:\d+\/hooks)/.exec(stdout)?.[1])) {
          if (child.exitCode !== null || Date.now() > ready) throw new Error(`serve did not start: ${stdout}${stderr}`);
          await delay(50);
        }
        const delivery = randomUUID();
        const body = JSON.stringify({ action: `${HOSTILE}\n2026-01-01T00:00:00.000Z push ${randomUUID()} 202 done 1ms`, zen: 'x', hook_id: 1 });
        const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
        const answer = await fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-platform-event': 'ping',
            'x-platform-delivery': delivery,
            'x-platform-hook-id': '1',
            'user-agent': 'Platform-Hookshot/1a2b3c',
            'x-hub-signature-256': signature,
          },
          body,
        });
        await answer.arrayBuffer();
        const logged = Date.now() + 10_000;
        while (!stdout.includes(delivery) && Date.now() < logged) await delay(20);
        const lines = stdout.trimEnd().split('\n');
        const line = lines.find((l) => l.includes(delivery));
        assert.ok(line, stdout);
        assert.ok(line.includes(`ping.${SHOWN}\\n2026-01-01T00:00:00.000Z push`), line);
        assert.equal(lines.length, 2, `the listening line and one line for the delivery:\n${stdout}`);
      } finally {
        child.kill('SIGTERM');
        await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once('close', resolve)));
      }
      assertTerminalSafe({ code: 0, stdout, stderr }, 'hooks serve');
    });
  });
});
