// `npm start` is the README's first command: the built `gantry demo`, every step against the embedded dev servers,
// Lighthouse and ChromeDriver included. Run here as npm start runs it (node dist/lib/cli/main.js demo, built by
// pretest), once as a person sees it and once with --json.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../analysis/gantry.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function demo(args: string[]): Promise<Run> {
  const child = spawn(process.execPath, [join(repoRoot, 'dist/lib/cli/main.js'), 'demo', ...args], {
    cwd: repoRoot,
    env: { ...process.env, GANTRY_LOG: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

interface DemoJson {
  failed: string[];
  steps: {
    modules: { lockFile: string; modules: Array<{ name: string; version: string; hash: string }>; installed: Array<{ status: string }>; verified: boolean };
    secrets: { path: string; kvVersion: number; version: number; matched: boolean };
    gate: { status: string; checks: Array<{ verdict: string }> };
    'commit-status': {
      repository: string;
      sha: string;
      context: string;
      state: string;
      description: string;
      readBack: string;
      combined: string;
      seenByApp: string;
      violations: number;
    };
    browser: { pages: Array<{ url: string; passed: boolean; status: number }> };
    'protected-deploy': { environment: string; decision: string; state: string; deliveries: string[] };
    login: { account: { email: string } | null; scope: string; channels: string[]; store: string };
    publish: { folderId: string; folder: string; reportUrl: string; files: Array<{ title: string; id: string; mimeType: string; link: string | null }> };
    agent: { resource: string; scopes: string[]; tools: string[]; resolved: { source: string; version: string } };
  };
}

describe('gantry demo (npm start): the example pipeline end to end', function () {
  this.timeout(300_000);

  it('runs every step against the embedded servers and says what it did, step by step', async () => {
    const run = await demo([]);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    for (const step of [
      '[1/9] modules',
      '[2/9] secrets',
      '[3/9] gate',
      '[4/9] commit-status',
      '[5/9] protected-deploy',
      '[6/9] login',
      '[7/9] publish',
      '[8/9] browser',
      '[9/9] agent',
    ])
      assert.ok(run.stdout.includes(step), `${step} missing:\n${run.stdout}`);
    assert.match(run.stdout, /verified 2 modules against/);
    assert.match(run.stdout, /read it back: .*matches what was written/);
    assert.match(run.stdout, /Page analysis gate PASSED/);
    assert.match(
      run.stdout,
      /posted success for gantry\/gate on gantry\/demo@[0-9a-f]{12} \(as the repository's workflow token\): passed on 1 page: performance/,
    );
    assert.match(run.stdout, /read it back: success gantry\/gate .*the commit's combined state is success/);
    assert.match(run.stdout, /app 1's installation 1 sees it too \(success\), with a token the app's private key got/);
    assert.match(run.stdout, /deployment_protection_rule\.requested 20[02]/);
    assert.match(run.stdout, /the app approved it; the comment the platform shows begins: \*\*Page analysis gate passed\*\*/);
    assert.match(run.stdout, /the deployment's state is now success/);
    assert.match(run.stdout, /the approval page said: Access granted/);
    assert.match(
      run.stdout,
      /logged in as dev@gantry\.test; scopes: openid email https:\/\/www\.googleapis\.com\/auth\/video\.readonly https:\/\/www\.googleapis\.com\/auth\/storage\.file/,
    );
    assert.match(run.stdout, /whoami: channel \S+ "Gantry Dev's channel"/);
    assert.match(
      run.stdout,
      /created the folder gantry-demo-reports \(\S+\) on http:\/\/127\.0\.0\.1:\d+ with the device login's access token \(profile demo\)/,
    );
    assert.match(
      run.stdout,
      /published 5 files; the folder lists:\n(?: {4}\S+-(?:gate|report|run-1)\.(?:json|html) +\d+ B {2}http:\/\/127\.0\.0\.1:\d+\/file\/d\/\S+\/view\n){5}/,
    );
    assert.match(
      run.stdout,
      /sign in: http:\/\/127\.0\.0\.1:\d+\/authorize\?… \(PKCE S256, resource http:\/\/127\.0\.0\.1:\d+\/mcp\); approving as dev in headless Chromium/,
    );
    assert.match(run.stdout, /the callback page said: Gantry is signed in/);
    assert.match(run.stdout, /signed in; token for http:\/\/127\.0\.0\.1:\d+\/mcp with scope modules:read; 6 tools: /);
    assert.match(run.stdout, /modules_resolve 127\.0\.0\.1:\d+\/gantry\/network\/aws "~> 1\.0" -> 1\.1\.0 \(http:\/\/127\.0\.0\.1:\d+\//);
    assert.match(run.stdout, /Demo finished: 9 of 9 steps succeeded\./);
    assert.doesNotMatch(run.stdout, /later:|failed:/);
  });

  it('--json: the pinned versions, the secret read back, the gate and the browser check, and no work folder left', async () => {
    const run = await demo(['--json']);
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout) as DemoJson;
    assert.deepEqual(result.failed, []);
    const { modules, secrets, gate, browser, 'commit-status': status, 'protected-deploy': deploy } = result.steps;
    assert.deepEqual([deploy.environment, deploy.decision, deploy.state], ['production', 'approved', 'success']);
    assert.deepEqual([result.steps.login.account?.email, result.steps.login.channels.length, result.steps.login.store], ['dev@gantry.test', 1, 'file']);
    assert.ok(
      deploy.deliveries.some((d) => d.startsWith('deployment_protection_rule.requested')),
      deploy.deliveries.join(', '),
    );
    assert.deepEqual(
      modules.modules.map((m) => [m.name, m.version]),
      [
        ['network', '1.1.0'],
        ['bucket', '1.2.0'],
      ],
    );
    for (const pinned of modules.modules) assert.match(pinned.hash, /^h1:[A-Za-z0-9+/]{43}=$/);
    assert.deepEqual(
      modules.installed.map((m) => m.status),
      ['installed', 'installed'],
    );
    assert.equal(modules.verified, true);
    assert.equal(existsSync(modules.lockFile), false, 'the demo removes its work folder unless --keep');
    assert.deepEqual([secrets.path, secrets.kvVersion, secrets.version, secrets.matched], ['secret/demo/database', 2, 1, true]);
    assert.equal(gate.status, 'pass');
    assert.deepEqual(
      [status.repository, status.context, status.state, status.readBack, status.combined, status.seenByApp],
      ['gantry/demo', 'gantry/gate', 'success', 'success', 'success', 'success'],
    );
    assert.equal(status.violations, 0, 'the platform API counted no broken limit');
    assert.match(status.sha, /^[0-9a-f]{40}$/);
    assert.ok([...status.description].length <= 140 && status.description.startsWith('passed on 1 page: performance'), status.description);
    assert.ok(gate.checks.length >= 5 && gate.checks.every((check) => check.verdict === 'pass'));
    assert.deepEqual(
      browser.pages.map((page) => [new URL(page.url).pathname, page.status, page.passed]),
      [
        ['/', 200, true],
        ['/about.html', 200, true],
      ],
    );
    const { publish } = result.steps;
    assert.equal(publish.folder, 'gantry-demo-reports');
    assert.deepEqual(
      publish.files.map((file) => file.title.replace(/^.*-\d{8}T\d{6}Z-/, '')),
      ['gate.json', 'report.html', 'report.json', 'run-1.html', 'run-1.json'],
    );
    assert.deepEqual(
      publish.files.map((file) => file.mimeType),
      ['application/json', 'text/html', 'application/json', 'text/html', 'application/json'],
    );
    assert.equal(publish.reportUrl, publish.files[1]!.link, 'the representative report is the Lighthouse HTML');
    const { agent } = result.steps;
    assert.deepEqual([agent.scopes, agent.tools.length, agent.resolved.version], [['modules:read'], 6, '1.1.0']);
    assert.match(agent.resource, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    assert.deepEqual(
      Object.keys(result.steps.gate).sort(),
      ['checks', 'scores', 'status'],
      'the whole gate result (kept for the publish step) stays out of the JSON',
    );
  });
});
