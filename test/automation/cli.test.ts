import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { gantry, gantryIntoClosedPipe, liveGroupMembers, repoRoot } from '../analysis/gantry.js';
import { startHttpPeer, type HttpPeer } from '../peers/http.js';

describe('gantry browser check (the command, as a separate process, against Debian chromedriver)', function () {
  this.timeout(90_000);
  let site: HttpPeer;

  before(async () => {
    site = await startHttpPeer((request, response) => {
      const found = request.url === '/';
      response.writeHead(found ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
      response.end(`<!doctype html><title>${found ? 'Gantry demo site' : 'Not found'}</title>`);
    });
  });
  after(async () => {
    await site?.close();
  });

  it('exit 0 and a table with each check when the page passes; --status and --title-match equals are honoured', async () => {
    const run = await gantry(['browser', 'check', `${site.url}/gone`, '--status', '404', '--title', 'Not found', '--title-match', 'equals']);
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.trim().split('\n');
    assert.match(lines[0] ?? '', /^URL\s+CHECK\s+EXPECTED\s+ACTUAL\s+RESULT$/);
    assert.match(run.stdout, /load\s+the page loads\s+loaded\s+pass/);
    assert.match(run.stdout, /title\s+equals "Not found"\s+"Not found"\s+pass/);
    assert.match(run.stdout, /status\s+404\s+404\s+pass/);
  });

  it('exit 1 when a check fails; --json has every result; the reason is on stderr', async () => {
    const run = await gantry(['browser', 'check', `${site.url}/`, `${site.url}/gone`, '--title', 'Gantry', '--json']);
    assert.equal(run.code, 1, run.stderr);
    const document = JSON.parse(run.stdout) as { passed: boolean; results: Array<{ passed: boolean; status: number; title: string }> };
    assert.equal(document.passed, false);
    assert.deepEqual(
      document.results.map((r) => [r.passed, r.status, r.title]),
      [
        [true, 200, 'Gantry demo site'],
        [false, 404, 'Not found'],
      ],
    );
    assert.match(run.stderr, /browser check failed for .*\/gone \(title: expected contains "Gantry", got "Not found"; status: expected 2xx, got 404\)/);
  });

  it('exit 2 for bad input, before any browser starts', async () => {
    for (const args of [['file:///etc/passwd'], [`${site.url}/`, '--status', 'ok']]) {
      const run = await gantry(['browser', 'check', ...args]);
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.equal(run.stdout, '');
      assert.match(run.stderr, /^error: /);
    }
    const hints: Array<[string[], RegExp]> = [
      [
        ['--title', 'Gantry', '--title-match', 'fuzzy'],
        /neither contains nor equals\nhint: use --title-match contains \(the default\) or --title-match equals/,
      ],
      [['--status-source', 'proxy'], /neither browser nor http\nhint: use --status-source browser or --status-source http/],
    ];
    for (const [args, expected] of hints) {
      const run = await gantry(['browser', 'check', `${site.url}/`, ...args]);
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, expected);
    }
  });

  it('exit 3 when the driver cannot start, exit 2 when it is not there, with a hint; --chromedriver-path wins over CHROMEDRIVER_PATH', async () => {
    const run = await gantry(['browser', 'check', `${site.url}/`], { CHROMEDRIVER_PATH: '/bin/false' });
    assert.equal(run.code, 3, run.stderr);
    assert.match(run.stderr, /chromedriver exited before it was ready/);
    assert.match(run.stderr, /hint: /);
    const flag = await gantry(['browser', 'check', `${site.url}/`, '--chromedriver-path', '/nonexistent/chromedriver'], { CHROMEDRIVER_PATH: '/bin/false' });
    assert.equal(flag.code, 2, flag.stderr);
    assert.match(flag.stderr, /the driver \/nonexistent\/chromedriver is not an executable file/);
  });

  it('page verdicts are failed checks, not driver failures: --timeout 1 fails the load check naming the timeout, exit 1 (not 3)', async () => {
    const run = await gantry(['browser', 'check', `${site.url}/`, '--timeout', '1']);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stdout, /load\s+the page loads\s+page load timed out after 1 ms\s+FAIL/);
    assert.match(run.stderr, /^error: the browser check failed for .* \(load: expected the page loads, got page load timed out after 1 ms\)$/m);
    assert.doesNotMatch(run.stderr, /answered 500|WebDriverError/);
  });

  it('closed pipe: `gantry browser check … | head -1` ends quietly, with its own exit code, and the driver and browser are stopped', async () => {
    // The reader is gone before anything is written: every write to stdout fails with EPIPE.
    const run = await gantryIntoClosedPipe(['browser', 'check', `${site.url}/`, `${site.url}/gone`, '--json'], { GANTRY_LOG: 'debug' });
    assert.equal(run.code, 1, run.stderr);
    assert.doesNotMatch(run.stderr, /EPIPE|^\s+at /m);
    const pid = Number(/chromedriver \S+ \(pid (\d+)\) ready/.exec(run.stderr)?.[1]);
    assert.ok(pid > 0, run.stderr);
    assert.match(run.stderr, new RegExp(`chromedriver \\(pid ${pid}\\) stopped`));
    assert.deepEqual(liveGroupMembers(pid), [], 'no driver or browser of that run is left');

    // And as a shell runs it: head takes the first line and goes; the pipeline's first command ends quietly.
    const piped = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(
        'bash',
        ['--norc', '-c', 'set -o pipefail; node --import tsx lib/cli/main.ts browser check "$1" "$1" | head -1', 'sh', `${site.url}/`],
        {
          cwd: repoRoot,
          env: { ...process.env, GANTRY_LOG: 'warn' },
        },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    assert.equal(piped.code, 0, piped.stderr);
    assert.match(piped.stdout, /^URL\s+CHECK\s+EXPECTED\s+ACTUAL\s+RESULT\n$/);
    assert.equal(piped.stderr, '');
  });
});
