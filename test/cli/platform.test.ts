// `gantry platform api | rate-limit | status` in processes of their own against the embedded platform API (in this
// process, on a real socket): what they print, their exit codes, and that bad input is refused before anything is sent.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { startPlatformServer, type PlatformServer } from '../../devserver/platform/index.js';
import { parseFields } from '../../lib/cli/commands/platform/index.js';
import { runGantry as gantry } from './gantry-process.js';

const sha = 'c'.repeat(40);

describe('gantry platform (against the embedded platform API)', function () {
  this.timeout(120_000);
  let server: PlatformServer;
  let env: Record<string, string>;
  before(async () => {
    server = await startPlatformServer();
    env = { PLATFORM_API_URL: server.url, GANTRY_PLATFORM_TOKEN: server.issueToken({ kind: 'personal', login: 'cli' }) };
  });
  after(() => server.stop());

  it("api <path> prints the answer's JSON; -f fields are a POST's JSON body, and go into the query with -X GET; --paginate prints every page's items as one array", async () => {
    const repo = await gantry(['platform', 'api', '/repos/gantry/demo'], env);
    assert.equal(repo.code, 0, repo.stderr);
    assert.equal(JSON.parse(repo.stdout).full_name, 'gantry/demo');
    const created = await gantry(['platform', 'api', 'repos/gantry/site/issues', '-f', 'title=Broken link', '-f', 'labels[]=bug'], env);
    assert.equal(created.code, 0, created.stderr);
    const issue = JSON.parse(created.stdout);
    assert.equal(issue.title, 'Broken link');
    assert.deepEqual(
      parseFields(['title=a=b', 'labels[]=bug', 'labels[]=ui']),
      { title: 'a=b', labels: ['bug', 'ui'] },
      'key[]=v makes a list, as gh api reads it',
    );
    const listed = await gantry(['platform', 'api', '/repos/gantry/site/issues', '-X', 'GET', '-f', 'state=open', '-f', 'per_page=1', '--paginate'], env);
    assert.equal(listed.code, 0, listed.stderr);
    const items = JSON.parse(listed.stdout);
    assert.ok(Array.isArray(items) && items.some((i: { title: string }) => i.title === 'Broken link'), listed.stdout);
    const one = await gantry(['platform', 'api', '/repos/gantry/demo', '--paginate'], env);
    assert.equal(one.code, 0, one.stderr);
    assert.deepEqual(
      JSON.parse(one.stdout).map((r: { full_name: string }) => r.full_name),
      ['gantry/demo'],
      '--paginate on one object prints it, as gh api does',
    );
    const missing = await gantry(['platform', 'api', '/repos/gantry/nope'], env);
    assert.equal(missing.code, 1, 'a 404 is a definite no');
    assert.match(missing.stderr, /^error: GET .*\/repos\/gantry\/nope answered 404: Not Found/m);
    const bad = await gantry(['platform', 'api', '/repos/gantry/demo', '-f', 'novalue'], env);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /-f: "novalue" is not key=value/);
  });

  it('rate-limit: a table of each resource from GET /rate_limit (RATE-EP-STATUS: no primary budget spent) and the secondary budgets kept; --json', async () => {
    const table = await gantry(['platform', 'rate-limit'], env);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^RESOURCE\s+LIMIT\s+USED\s+REMAINING\s+RESET$/m);
    assert.match(table.stdout, /^core\s+5000\s+\d+\s+\d+\s+\d{4}-\d\d-\d\dT/m);
    assert.match(table.stdout, /^search\s+30\s/m);
    assert.match(table.stdout, /identity: personal/);
    assert.match(table.stdout, /^requests in flight \(RATE-SEC-CONCURRENCY\)\s+100\s+0\s+100$/m);
    assert.match(table.stdout, /creations this hour \(RATE-SEC-CONTENT-CREATION\)\s+500/);
    const json = await gantry(['platform', 'rate-limit', '--json'], env);
    assert.equal(json.code, 0, json.stderr);
    const report = JSON.parse(json.stdout);
    const core = report.resources.find((r: { resource: string }) => r.resource === 'core');
    assert.equal(core.limit, 5000);
    assert.equal(report.identity.kind, 'personal');
    assert.equal(report.limits.pointsPerMinute, 900);
    assert.ok(report.secondary.some((r: { budget: string }) => r.budget.startsWith('points this minute: GET /rate_limit')));
    const closed = await gantry(['platform', 'rate-limit'], { ...env, PLATFORM_API_URL: '' });
    assert.equal(closed.code, 2);
    assert.match(closed.stderr, /no platform API address: pass --api-url or set PLATFORM_API_URL/);
  });

  it('status posts a commit status that reads back; bad input is exit 2 with nothing sent (state, description over 140, target URL, repository, empty context)', async () => {
    const posted = await gantry(
      [
        'platform',
        'status',
        'gantry/demo',
        sha,
        '--state',
        'success',
        '--context',
        'gantry/gate',
        '--description',
        'performance 0.93 ≥ 0.90',
        '--target-url',
        'https://ci.example/runs/1',
      ],
      env,
    );
    assert.equal(posted.code, 0, posted.stderr);
    assert.match(posted.stdout, /^success for gantry\/gate on gantry\/demo@cccccccccccc/);
    const read = await fetch(`${server.url}/repos/gantry/demo/commits/${sha}/statuses`, { headers: { authorization: `Bearer ${env.GANTRY_PLATFORM_TOKEN}` } });
    const statuses = (await read.json()) as Array<{ state: string; context: string; description: string; target_url: string }>;
    assert.deepEqual(
      statuses.map((s) => [s.state, s.context, s.description, s.target_url]),
      [['success', 'gantry/gate', 'performance 0.93 ≥ 0.90', 'https://ci.example/runs/1']],
    );

    const before = server.stats().requests;
    const refused = await Promise.all(
      [
        ['--state', 'passed', '--context', 'c'],
        ['--state', 'failure', '--context', 'c', '--description', 'x'.repeat(141)],
        ['--state', 'failure', '--context', 'c', '--target-url', 'javascript:alert(1)'],
        ['--state', 'failure', '--context', ''],
        ['--state', 'failure'],
      ].map((flags) => gantry(['platform', 'status', 'gantry/demo', sha, ...flags], env)),
    );
    refused.push(await gantry(['platform', 'status', 'not-a-repo', sha, '--state', 'success', '--context', 'c'], env));
    for (const result of refused) {
      assert.equal(result.code, 2, result.stderr);
      assert.equal(result.stdout, '');
    }
    assert.match(refused[0]!.stderr, /--state: "passed" is not a status state/);
    assert.match(refused[1]!.stderr, /--description is 141 characters; the platform takes at most 140/);
    assert.match(refused[2]!.stderr, /--target-url: "javascript:alert\(1\)" is not an http\(s\) URL/);
    assert.match(refused[3]!.stderr, /--context is empty/);
    assert.match(refused[4]!.stderr, /--context/);
    assert.match(refused[5]!.stderr, /not-a-repo" is not a repository/);
    assert.equal(server.stats().requests, before, 'nothing was sent');
  });

  it('RATE-REVOKED-TOKEN-401: a revoked token is exit 1 saying to renew it; the token is never a flag and never printed', async () => {
    const token = server.issueToken({ kind: 'personal', login: 'gone' });
    server.revokeToken(token);
    const revoked = await gantry(['platform', 'api', '/repos/gantry/demo'], { ...env, GANTRY_PLATFORM_TOKEN: token });
    assert.equal(revoked.code, 1);
    assert.match(revoked.stderr, /answered 401: Bad credentials/);
    assert.match(revoked.stderr, /^hint: renew the token/m);
    assert.ok(!revoked.stderr.includes(token));
    const flag = await gantry(['platform', 'api', '/repos/gantry/demo', '--token', token], env);
    assert.equal(flag.code, 2);
    assert.match(flag.stderr, /unknown option '--token'/);
    const help = await gantry(['platform', '--help'], env);
    assert.match(help.stdout, /GANTRY_PLATFORM_TOKEN, else PLATFORM_TOKEN .* never from a flag/s);
  });

  it('piped into head -1 (built, as installed): the first line, exit 0, nothing on stderr', async () => {
    const bin = fileURLToPath(new URL('../../dist/lib/cli/main.js', import.meta.url));
    for (const args of ['platform api /repos/gantry/demo', 'platform api /repos/gantry/demo/issues -X GET --paginate', 'platform rate-limit']) {
      // Asynchronous: the server answering it lives in this process.
      const child = spawn('bash', ['--norc', '-c', `"${process.execPath}" "${bin}" ${args} | head -1; echo "exit=\${PIPESTATUS[0]}"`], {
        env: { PATH: process.env.PATH, HOME: process.env.HOME, GANTRY_LOG: 'warn', ...env },
      });
      const run = { stdout: '', stderr: '' };
      child.stdout.on('data', (c: Buffer) => (run.stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (run.stderr += c.toString()));
      await once(child, 'close');
      const [first, exit] = run.stdout.trim().split('\n');
      assert.match(first!, /^(\{|\[|RESOURCE)/, args);
      assert.equal(exit, 'exit=0', `${args}: ${run.stderr}`);
      assert.equal(run.stderr, '', args);
    }
  });
});
