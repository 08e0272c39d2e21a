// "The token is kept in memory and never logged" (issue 4, item 7), tested against real log output: the built
// `gantry` command (dist/lib/cli/main.js, as npm installs it; `npm run build` first, as `pretest` does) at debug level
// (`--verbose`, and GANTRY_LOG=debug alone) through logins, a retried read and a 403, and the library with a capturing
// logger. Every token that crossed the wire (sent or issued), the passwords and the secret_ids are canaries searched
// for in everything printed or logged.
import assert from 'node:assert/strict';
import { runNode, withEnv, type Ran } from './helpers/run-process.js';
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { startSecretsServer, type SecretsServer } from '../../devserver/secrets/index.js';
import { createLogger, type Logger } from '../../lib/log.js';
import { SecretsClient, SecretsError } from '../../lib/secrets/index.js';

const bin = fileURLToPath(new URL('../../dist/lib/cli/main.js', import.meta.url));

/**
 * A pass-through HTTP proxy in front of the kv server that remembers every token it sees: the ones sent in
 * X-Secrets-Token or Authorization, and every `client_token` a login or token call answered with. The tokens a
 * command obtained and never printed are known to the test this way. It also keeps the request bodies, to show that
 * a password or secret_id did reach the service.
 */
async function startRecordingProxy(target: string) {
  const upstream = new URL(target);
  const tokens = new Set<string>();
  const bodies: string[] = [];
  const agent = new http.Agent({ keepAlive: false });
  const proxy = http.createServer((req, res) => {
    const sent = req.headers['x-secrets-token'];
    if (typeof sent === 'string' && sent) tokens.add(sent);
    const bearer = /^bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
    if (bearer) tokens.add(bearer[1]!.trim());
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      bodies.push(body.toString('utf8'));
      const headers = { ...req.headers, host: upstream.host };
      delete headers['accept-encoding'];
      const forward = http.request({ hostname: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers, agent }, (answer) => {
        const parts: Buffer[] = [];
        answer.on('data', (c: Buffer) => parts.push(c));
        answer.on('end', () => {
          const text = Buffer.concat(parts);
          for (const m of text.toString('utf8').matchAll(/"client_token"\s*:\s*"([^"]+)"/g)) tokens.add(m[1]!);
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.end(text);
        });
      });
      forward.on('error', () => res.destroy());
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    tokens,
    bodies,
    close: () =>
      new Promise<void>((resolve) => {
        proxy.closeAllConnections();
        proxy.close(() => resolve());
        agent.destroy();
      }),
  };
}

const random = () => Math.random().toString(36).slice(2);

describe('SEC-AUTH-LOGIN-JSON, SEC-AUTH-403: no token, password or secret_id in any log output (the built command at debug level, and the library)', function () {
  this.timeout(180_000);
  const rootToken = `hvs.root-canary-${random()}`;
  const password = `pw-canary-${random()}`;
  const secretId = `secret-id-canary-${random()}`;
  const roleId = `role-id-${random()}`;
  let server: SecretsServer;
  let proxy: Awaited<ReturnType<typeof startRecordingProxy>>;
  let userToken: string;

  /** Every secret the output must not hold: the fixed canaries and every token seen on the wire so far. */
  const canaries = () =>
    new Map<string, string>([
      ['the root token', rootToken],
      ['the password', password],
      ['the secret_id', secretId],
      ['the userpass token', userToken],
      ...[...proxy.tokens].map((t, i): [string, string] => [`token #${i} seen on the wire`, t]),
    ]);
  function assertNoCanary(text: string, where: string) {
    for (const [what, value] of canaries()) {
      assert.ok(value.length >= 16, `${what} is long enough to search for`);
      // (The canaries hold only characters that JSON and URL encoding leave as they are, so this finds those forms too.)
      assert.ok(!text.includes(value), `${what} appears in ${where}:\n${text.replaceAll(value, '<LEAKED>')}`);
    }
  }

  before(async function () {
    if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`npm run build\` first (npm test does it in pretest)`);
    server = await startSecretsServer({
      rootToken,
      users: [{ username: 'deployer', password, policies: ['app'] }],
      approles: [{ roleName: 'ci', roleId, secretId, policies: ['app'] }],
      policies: { app: { 'secret/data/app/*': ['create', 'read', 'update'] } },
    });
    proxy = await startRecordingProxy(server.url);
    const admin = new SecretsClient({ address: server.url, token: rootToken, sources: { env: {}, pulumi: undefined } });
    await admin.kv('secret', { kvVersion: 2 }).write('app/db', { user: 'app' });
    await admin.kv('secret', { kvVersion: 2 }).write('other/x', { v: '1' });
    admin.close();
    const user = new SecretsClient({ address: server.url, sources: { env: {}, pulumi: undefined } });
    await user.loginUserpass('deployer', password);
    userToken = user.revealToken()!;
    user.close();
  });
  after(async () => {
    await proxy?.close();
    await server?.stop();
  });
  afterEach(() => server.setFaults([]));

  function gantry(args: string[], options: { stdin?: string; env?: Record<string, string | undefined> } = {}): Promise<Ran> {
    const env = withEnv({ PATH: process.env.PATH, HOME: process.env.HOME, SECRETS_ADDR: proxy.url, GANTRY_LOG: 'debug' }, options.env);
    return runNode([bin, ...args], { env, ...(options.stdin === undefined ? {} : { stdin: options.stdin }) });
  }

  // Each run twice: with --verbose (debug log and full error stacks) and with GANTRY_LOG=debug alone.
  const modes: Array<{ name: string; flags: string[] }> = [
    { name: '--verbose', flags: ['--verbose'] },
    { name: 'GANTRY_LOG=debug', flags: [] },
  ];

  for (const mode of modes) {
    describe(`the built command, ${mode.name}`, () => {
      const runs: Array<{ what: string; ran: Ran }> = [];
      async function run(what: string, args: string[], options: { stdin?: string; env?: Record<string, string | undefined> } = {}): Promise<Ran> {
        const ran = await gantry([...mode.flags, 'secrets', ...args], options);
        runs.push({ what, ran });
        assertNoCanary(`${ran.stdout}\n${ran.stderr}`, `the output of ${what} (${mode.name})`);
        return ran;
      }
      after(() => {
        // Checked again at the end: a token issued by a later run is searched for in the earlier runs' output too.
        for (const { what, ran } of runs) assertNoCanary(`${ran.stdout}\n${ran.stderr}`, `the output of ${what} (${mode.name})`);
      });

      it('SEC-AUTH-LOGIN-NO-AUTH, SEC-AUTH-LOGIN-JSON: login userpass (password on stdin), in table and --json form, and a wrong password (403)', async () => {
        const tokensBefore = proxy.tokens.size;
        const table = await run('login userpass', ['login', 'userpass', '--username', 'deployer'], { stdin: `${password}\n` });
        assert.equal(table.code, 0, table.stderr);
        assert.match(table.stdout, /token\s+<hidden/);
        const json = await run('login userpass --json', ['--json', 'login', 'userpass', '--username', 'deployer'], { stdin: password });
        assert.equal(json.code, 0, json.stderr);
        assert.ok((JSON.parse(json.stdout) as { policies: string[] }).policies.includes('app'));
        assert.ok(proxy.tokens.size >= tokensBefore + 2, 'both logins were issued a token (now a canary)');
        assert.ok(
          proxy.bodies.some((b) => b.includes(password)),
          'the password did reach the service',
        );
        assertNoCanary(`${table.stdout}\n${table.stderr}\n${json.stdout}\n${json.stderr}`, 'the login output');
        const wrong = `${password}-wrong`;
        const refused = await run('login userpass with a wrong password', ['login', 'userpass', '--username', 'deployer'], { stdin: wrong });
        assert.equal(refused.code, 1, refused.stderr);
        assert.match(refused.stderr, /403/);
        assert.ok(!`${refused.stdout}${refused.stderr}`.includes(wrong), 'not the wrong password either');
      });

      it('SEC-AUTH-LOGIN-JSON: login approle, the secret_id on stdin and from SECRETS_SECRET_ID', async () => {
        const tokensBefore = proxy.tokens.size;
        const piped = await run('login approle (stdin)', ['login', 'approle', '--role-id', roleId], { stdin: `${secretId}\n` });
        assert.equal(piped.code, 0, piped.stderr);
        assert.match(piped.stdout, /token\s+<hidden/);
        const fromEnv = await run('login approle (SECRETS_SECRET_ID)', ['--json', 'login', 'approle', '--role-id', roleId], {
          env: { SECRETS_SECRET_ID: secretId },
        });
        assert.equal(fromEnv.code, 0, fromEnv.stderr);
        assert.ok((JSON.parse(fromEnv.stdout) as { policies: string[] }).policies.includes('app'));
        assert.ok(proxy.tokens.size >= tokensBefore + 2, 'both logins were issued a token (now a canary)');
        assert.ok(
          proxy.bodies.some((b) => b.includes(secretId)),
          'the secret_id did reach the service',
        );
      });

      for (const status of [503, 412]) {
        it(`SEC-STATUS-${status}: a read retried after a ${status} logs the retry at debug level, without the token`, async () => {
          server.setFaults([{ method: 'GET', path: '/v1/secret/data/app/db', status, count: 1 }]);
          const read = await run(`get after a ${status}`, ['get', 'secret/app/db', '--field', 'user'], { env: { SECRETS_TOKEN: userToken } });
          assert.equal(read.code, 0, read.stderr);
          assert.equal(read.stdout, 'app', 'the raw value, no newline added on a pipe');
          // The debug log is on and says what happened, so the search above looked at real log lines.
          assert.match(
            read.stderr,
            new RegExp(`debug: GET http://127\\.0\\.0\\.1:\\d+/v1/secret/data/app/db: .*${status}.*; retrying in \\d+ ms`),
            read.stderr,
          );
          assert.equal(server.faults()[0]?.count, 0, 'the fault was met');
        });
      }

      it('SEC-AUTH-403, SEC-STATUS-403: a token without a policy for the path gets a 403 (exit 1: a definite no); the error, hint and stack hold no token', async () => {
        for (const args of [
          ['get', 'secret/other/x', '--kv-version', '2'],
          ['get', 'secret/other/x'],
        ]) {
          const denied = await run(`${args.join(' ')} (403)`, args, { env: { SECRETS_TOKEN: userToken } });
          assert.equal(denied.code, 1, denied.stderr);
          assert.match(denied.stderr, /403/);
          assert.match(denied.stderr, /permission denied/);
          if (mode.flags.includes('--verbose')) assert.match(denied.stderr, /\n\s+at /, 'with --verbose the stack is printed (and searched)');
        }
      });
    });
  }

  describe('the library, with a capturing logger', () => {
    const raw: string[] = [];
    const formatted: string[] = [];
    const errors: string[] = [];
    /** What the library hands the logger (before redaction) and what the standard logger writes (after). */
    const writer = createLogger({ level: 'debug', write: (line) => formatted.push(line) });
    const logger: Logger = {
      debug: (m) => {
        raw.push(`debug: ${m}`);
        writer.debug(m);
      },
      info: (m) => {
        raw.push(m);
        writer.info(m);
      },
      warn: (m) => {
        raw.push(`warn: ${m}`);
        writer.warn(m);
      },
      error: (m) => {
        raw.push(`error: ${m}`);
        writer.error(m);
      },
    };
    const clients: SecretsClient[] = [];
    const newClient = (token?: string) => {
      const c = new SecretsClient({ address: proxy.url, token, logger, retryWaitMinMs: 10, retryWaitMaxMs: 20, sources: { env: {}, pulumi: undefined } });
      clients.push(c);
      return c;
    };
    const failure = async (attempt: Promise<unknown>) => {
      const error = await attempt.then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(error instanceof SecretsError, String(error));
      errors.push(`${error.message}\n${error.hint ?? ''}\n${error.errors.join('\n')}\n${error.stack ?? ''}`);
      return error;
    };
    after(() => {
      for (const c of clients) c.close();
    });

    it('SEC-AUTH-LOGIN-JSON, SEC-AUTH-403, SEC-STATUS-412, SEC-STATUS-503: logins, retried reads and 403s log nothing secret, before or after redaction', async () => {
      const user = newClient();
      await user.loginUserpass('deployer', password);
      const approle = newClient();
      await approle.loginAppRole(roleId, secretId);
      await newClient().loginWithToken(user.revealToken()!);
      await user.renewSelf();
      for (const status of [503, 412, 503]) {
        server.setFaults([{ method: 'GET', path: '/v1/secret/data/app/db', status, count: 1 }]);
        assert.deepEqual((await approle.kv('secret', { kvVersion: 2 }).read('app/db')).data, { user: 'app' });
      }
      server.setFaults([{ method: 'POST', path: '/v1/secret/data/app/*', status: 503, count: 1 }]);
      await user.kv('secret', { kvVersion: 2 }).write('app/written', { v: '1' });
      const denied = await failure(user.kv('secret', { kvVersion: 2 }).read('other/x'));
      assert.equal(denied.status, 403);
      // Detection answers (the token may use the mount, as Vault's sys/internal/ui/mounts), the read is refused.
      assert.equal((await failure(approle.kvAt('secret/other/x').then(({ kv, name }) => kv.read(name)))).status, 403);
      await failure(newClient().loginUserpass('deployer', `${password}-wrong`));
      await failure(newClient().loginAppRole(roleId, `${secretId}-wrong`));

      // The retries were logged (the capture is real), then nothing secret anywhere.
      assert.equal(raw.filter((l) => /^debug: GET .*\/v1\/secret\/data\/app\/db: .*; retrying in \d+ ms$/.test(l)).length, 3, raw.join('\n'));
      assert.ok(
        raw.some((l) => /^debug: POST .*\/v1\/secret\/data\/app\/written: .*503.*; retrying in \d+ ms$/.test(l)),
        raw.join('\n'),
      );
      assert.equal(formatted.length, raw.length);
      assert.ok(proxy.tokens.has(user.revealToken()!) && proxy.tokens.has(approle.revealToken()!), 'the issued tokens are canaries');
      assertNoCanary(raw.join('\n'), 'what the library passed to its logger');
      assertNoCanary(formatted.join('\n'), 'the log lines written');
      assertNoCanary(errors.join('\n'), 'the error messages, hints and stacks');
      for (const wrong of [`${password}-wrong`, `${secretId}-wrong`]) assert.ok(!`${raw.join('\n')}${errors.join('\n')}`.includes(wrong));
    });
  });
});
