import assert from 'node:assert/strict';
import { runNode, withEnv, type Ran } from './helpers/run-process.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSecretsServer, type SecretsServer } from '../../devserver/secrets/index.js';

// The built command (`npm run build` first, as `pretest` does): tsx compiling the sources cost each run a second of CPU.
const bin = fileURLToPath(new URL('../../dist/lib/cli/main.js', import.meta.url));

describe('gantry secrets (the command, in its own process, against the embedded kv server)', function () {
  this.timeout(120_000);
  let server: SecretsServer;
  let dir: string;
  let requests: string[];
  const canary = 'canary-value-0c7e11';
  const password = 'pw-cli-canary-44aa';

  function gantry(args: string[], options: { stdin?: string; env?: Record<string, string | undefined> } = {}): Promise<Ran> {
    const env = withEnv(
      { PATH: process.env.PATH, HOME: process.env.HOME, SECRETS_ADDR: server.url, SECRETS_TOKEN: server.rootToken, GANTRY_LOG: 'warn' },
      options.env,
    );
    return runNode([bin, 'secrets', ...args], {
      env,
      cwd: dir,
      ...(options.stdin === undefined ? {} : { stdin: options.stdin }),
    });
  }

  before(async () => {
    requests = [];
    server = await startSecretsServer({
      log: (line) => requests.push(line),
      users: [{ username: 'deployer', password, policies: ['app'] }],
      approles: [{ roleName: 'ci', policies: ['app'] }],
      policies: { app: { 'secret/data/app/*': ['create', 'read', 'update'] } },
    });
    dir = await mkdtemp(join(tmpdir(), 'gantry-secrets-cli-'));
  });
  after(async () => {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('SEC-API-ALL-OPERATIONS, SEC-EP-WRITE, SEC-EP-READ: put from key=value, key=@file and key=- (stdin); get masks values unless asked', async () => {
    await writeFile(join(dir, 'password.txt'), `${canary}\n`);
    const put = await gantry(['put', 'secret/app/db', 'user=app', 'password=@password.txt', 'pin=-'], { stdin: '4711\n' });
    assert.equal(put.code, 0, put.stderr);
    assert.match(put.stdout, /version\s+1/);
    // The command speaks the same HTTP API as the library: detection, then the kv v2 data path.
    assert.ok(requests.includes('GET /v1/sys/internal/ui/mounts/secret/app/db 200'), requests.join('\n'));
    assert.ok(requests.includes('POST /v1/secret/data/app/db 200'), requests.join('\n'));
    const table = await gantry(['get', 'secret/app/db']);
    assert.equal(table.code, 0, table.stderr);
    assert.ok(!table.stdout.includes(canary), 'the table masks values');
    assert.ok(!table.stdout.includes('4711'));
    assert.match(table.stdout, /password\s+<hidden, 19 chars>/);
    const field = await gantry(['get', 'secret/app/db', '--field', 'password']);
    assert.equal(field.stdout, canary, 'a trailing newline of the file is not stored, and none is added on a pipe');
    const pin = await gantry(['get', 'secret/app/db', '--field', 'pin']);
    assert.equal(pin.stdout, '4711');
    const json = await gantry(['--json', 'get', 'secret/app/db']);
    const parsed = JSON.parse(json.stdout) as { data: Record<string, string>; metadata: { version: number }; state: string };
    assert.deepEqual(parsed.data, { user: 'app', password: canary, pin: '4711' });
    assert.equal(parsed.state, 'current');
    const revealed = await gantry(['get', 'secret/app/db', '--reveal']);
    assert.ok(
      revealed.stdout.includes(canary),
      `--reveal shows values (exit ${revealed.code}): ${revealed.stdout.replaceAll(canary, '<canary>')} ${revealed.stderr}`,
    );
  });

  it('put @data.json and - (a JSON object on stdin); patch keeps the other keys; --cas guards writes', async () => {
    await writeFile(join(dir, 'data.json'), JSON.stringify({ a: '1', b: '2' }));
    assert.equal((await gantry(['put', 'secret/app/cfg', '@data.json'])).code, 0);
    assert.equal((await gantry(['put', 'secret/app/cfg', '-'], { stdin: '{"a":"10","b":"20"}' })).code, 0);
    const patch = await gantry(['patch', 'secret/app/cfg', 'b=21', 'c=30']);
    assert.equal(patch.code, 0, patch.stderr);
    const got = JSON.parse((await gantry(['--json', 'get', 'secret/app/cfg'])).stdout) as { data: unknown; metadata: { version: number } };
    assert.deepEqual(got.data, { a: '10', b: '21', c: '30' });
    assert.equal(got.metadata.version, 3);
    const cas = await gantry(['put', 'secret/app/cfg', '--cas', '1', 'a=x']);
    assert.equal(cas.code, 1);
    assert.match(cas.stderr, /check-and-set/);
    const badJson = await gantry(['put', 'secret/app/cfg', '-'], { stdin: '{"a": ' });
    assert.equal(badJson.code, 2);
    assert.match(badJson.stderr, /not valid JSON/);
  });

  it('get --version, rm, the deleted result (exit 1 with the undelete hint), undelete, destroy, meta and config', async () => {
    await gantry(['put', 'secret/app/v', 'n=1']);
    await gantry(['put', 'secret/app/v', 'n=2']);
    assert.equal((await gantry(['get', 'secret/app/v', '--version', '1', '--field', 'n'])).stdout, '1');
    assert.equal((await gantry(['rm', 'secret/app/v'])).code, 0);
    const deleted = await gantry(['get', 'secret/app/v']);
    assert.equal(deleted.code, 1);
    assert.match(deleted.stderr, /deleted at/);
    assert.match(deleted.stderr, /gantry secrets undelete secret\/app\/v --versions 2/);
    const deletedJson = await gantry(['--json', 'get', 'secret/app/v']);
    assert.equal(deletedJson.code, 1);
    assert.equal((JSON.parse(deletedJson.stdout) as { state: string }).state, 'deleted');
    assert.equal((await gantry(['undelete', 'secret/app/v', '--versions', '2'])).code, 0);
    assert.equal((await gantry(['get', 'secret/app/v', '--field', 'n'])).stdout, '2');
    assert.equal((await gantry(['destroy', 'secret/app/v', '--versions', '1'])).code, 0);
    const destroyed = await gantry(['get', 'secret/app/v', '--version', '1']);
    assert.equal(destroyed.code, 1);
    assert.match(destroyed.stderr, /destroyed/);
    const meta = await gantry(['meta', 'get', 'secret/app/v']);
    assert.match(meta.stdout, /current_version\s+2/);
    assert.match(meta.stdout, /^\s*1\s+\S+\s+\S+\s+true$/m);
    assert.equal((await gantry(['meta', 'put', 'secret/app/v', '--max-versions', '5', '--custom', 'owner=team-a'])).code, 0);
    const metaJson = JSON.parse((await gantry(['--json', 'meta', 'get', 'secret/app/v'])).stdout) as { maxVersions: number; customMetadata: unknown };
    assert.equal(metaJson.maxVersions, 5);
    assert.deepEqual(metaJson.customMetadata, { owner: 'team-a' });
    assert.equal((await gantry(['meta', 'rm', 'secret/app/v'])).code, 0);
    assert.equal((await gantry(['get', 'secret/app/v'])).code, 1);
    assert.equal((await gantry(['config', 'put', 'secret', '--max-versions', '7'])).code, 0);
    assert.equal((JSON.parse((await gantry(['--json', 'config', 'get', 'secret'])).stdout) as { maxVersions: number }).maxVersions, 7);
    for (const verb of [
      ['meta', 'put', 'secret/app/v'],
      ['config', 'put', 'secret'],
    ]) {
      const bad = await gantry([...verb, '--cas-required', 'maybe']);
      assert.equal(bad.code, 2, `${verb.join(' ')}: ${bad.stderr}`);
      assert.match(bad.stderr, /--cas-required must be true or false\nhint: write --cas-required true/);
    }
  });

  it('SEC-EP-LIST, SEC-LIST-EMPTY-404: list prints keys; an empty directory is no error; kv v1 works alike', async () => {
    await gantry(['put', 'kv/team/a', 'v=1']);
    await gantry(['put', 'kv/team/b/c', 'v=1']);
    const list = await gantry(['list', 'kv/team']);
    assert.equal(list.code, 0, list.stderr);
    assert.deepEqual(list.stdout.trim().split('\n').sort(), ['a', 'b/']);
    const empty = await gantry(['--json', 'list', 'secret/nobody/']);
    assert.equal(empty.code, 0);
    assert.deepEqual(JSON.parse(empty.stdout), []);
    assert.equal((await gantry(['get', 'kv/team/a', '--field', 'v'])).stdout, '1');
  });

  it('SEC-EP-HELP: help prints the markdown and the relative paths; --json the typed object', async () => {
    const help = await gantry(['help', 'secret/']);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /\/data\//);
    const json = JSON.parse((await gantry(['--json', 'help', 'secret/'])).stdout) as { openapi: { openapi: string } };
    assert.equal(json.openapi.openapi, '3.0.2');
  });

  it('SEC-AUTH-LOGIN-NO-AUTH: login userpass reads the password from stdin and shows the token masked; --token-only prints it alone', async () => {
    const login = await gantry(['login', 'userpass', '--username', 'deployer'], { stdin: `${password}\n`, env: { SECRETS_TOKEN: undefined } });
    assert.equal(login.code, 0, login.stderr);
    assert.match(login.stdout, /token_policies\s+.*app/);
    assert.match(login.stdout, /token\s+<hidden/);
    assert.ok(!`${login.stdout}${login.stderr}`.includes(password));
    const only = await gantry(['login', '--token-only', 'userpass', '--username', 'deployer'], { stdin: password, env: { SECRETS_TOKEN: undefined } });
    const token = only.stdout.trim();
    assert.ok(token.length > 10, only.stderr);
    const use = await gantry(['get', 'secret/app/db', '--kv-version', '2', '--field', 'user'], { env: { SECRETS_TOKEN: token } });
    assert.equal(use.stdout, 'app', use.stderr);
    const check = await gantry(['login', 'token'], { env: { SECRETS_TOKEN: token } });
    assert.equal(check.code, 0, check.stderr);
    assert.ok(!check.stdout.includes(token));
    // The token can come on stdin instead, and --renew renews it (renew-self).
    const piped = await gantry(['--json', 'login', 'token', '--renew'], { stdin: `${token}\n`, env: { SECRETS_TOKEN: undefined } });
    assert.equal(piped.code, 0, piped.stderr);
    assert.ok((JSON.parse(piped.stdout) as { ttl: number; renewable: boolean }).ttl > 0);
    assert.ok(!piped.stdout.includes(token));
    const role = server.approles.find((r) => r.roleName === 'ci')!;
    const approle = await gantry(['--json', 'login', 'approle', '--role-id', role.roleId], { stdin: role.secretId, env: { SECRETS_TOKEN: undefined } });
    assert.equal(approle.code, 0, approle.stderr);
    assert.ok((JSON.parse(approle.stdout) as { policies: string[] }).policies.includes('app'));
    assert.ok(!approle.stdout.includes(role.secretId));
  });

  it("SEC-AUTH-403: a bad token exits 1 (a definite no) with the service's message, never the token; a bad path exits 2 and sends nothing", async () => {
    const bad = 'bad-cli-token-canary-93';
    const denied = await gantry(['get', 'secret/app/db'], { env: { SECRETS_TOKEN: bad } });
    assert.equal(denied.code, 1);
    assert.match(denied.stderr, /403/);
    assert.ok(!`${denied.stdout}${denied.stderr}`.includes(bad));
    const before = requests.length;
    const badPath = await gantry(['get', 'secret/app/../sys', '--kv-version', '2']);
    assert.equal(badPath.code, 2);
    assert.match(badPath.stderr, /"\.\."/);
    const period = await gantry(['put', 'secret/app/x.', '--kv-version', '2', 'a=1']);
    assert.equal(period.code, 2);
    assert.match(period.stderr, /ends in a period/);
    assert.equal(requests.length, before, 'nothing was sent');
    // The flag wins over the environment.
    const flag = await gantry(['--address', server.url, 'get', 'secret/app/db', '--field', 'user'], { env: { SECRETS_ADDR: 'http://127.0.0.1:9' } });
    assert.equal(flag.stdout, 'app', flag.stderr);
    const down = await gantry(['get', 'secret/app/db', '--kv-version', '2'], { env: { SECRETS_ADDR: 'http://127.0.0.1:9' } });
    assert.equal(down.code, 3);
    assert.match(down.stderr, /ECONNREFUSED/);
    assert.match(down.stderr, /SECRETS_ADDR/);
  });

  it('SEC-AUTH-TOKEN-REQUIRED: with SECRETS_TOKEN empty or unset, get is a usage error (exit 2) saying to set it or log in; nothing is sent', async () => {
    const before = requests.length;
    for (const token of ['', undefined]) {
      const run = await gantry(['get', 'secret/app/db'], { env: { SECRETS_TOKEN: token } });
      assert.equal(run.code, 2, run.stderr);
      assert.match(
        run.stderr,
        /no token for .*; nothing was sent\nhint: Set SECRETS_TOKEN \(export SECRETS_TOKEN=<token>\), or log in: `gantry secrets login userpass --username <name>`/,
      );
      assert.doesNotMatch(run.stderr, /403|No mount holds/);
    }
    assert.equal(requests.length, before, 'nothing was sent');
    const bad = await gantry(['get', 'secret/app/db'], { env: { SECRETS_TOKEN: 'wrong-token-canary-6e02' } });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /token is wrong, expired or lacks a policy/);
  });

  it('a token set in the wrong variable is never echoed by the configuration error (exit 2)', async () => {
    const token = 'hvs.TokenCanaryInTheAddr2b71';
    for (const env of [
      { SECRETS_ADDR: token, SECRETS_TOKEN: token },
      { SECRETS_ADDR: token, SECRETS_TOKEN: undefined },
      { SECRETS_MAX_RETRIES: token },
      { SECRETS_CLIENT_TIMEOUT: token },
      { SECRETS_SKIP_VERIFY: token },
    ]) {
      const run = await gantry(['get', 'secret/app/db'], { env });
      assert.equal(run.code, 2, `${JSON.stringify(Object.keys(env))}: ${run.stderr}`);
      assert.match(run.stderr, new RegExp(Object.keys(env)[0]!));
      assert.ok(!`${run.stdout}${run.stderr}`.includes(token.slice(4)), run.stderr);
    }
    const short = await gantry(['get', 'secret/app/db'], { env: { SECRETS_MAX_RETRIES: 'two' } });
    assert.match(short.stderr, /SECRETS_MAX_RETRIES must be a whole number of retries \(0 or more\), got "two"/, 'short values stay readable');
  });
});
