// The demo's "try:" lines tell a person what to run once the demo has ended: its work folder and servers are gone by
// then, so the lines must name `gantry dev` and files that stay, and the commands must work against `gantry dev`'s
// servers. The servers here are gantry dev's own starters, on free ports (GANTRY_DEV_*_PORT=0).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { modulesStep } from '../../lib/cli/commands/demo/modules.js';
import { secretsStep } from '../../lib/cli/commands/demo/secrets.js';
import { SharedBrowser } from '../../lib/cli/commands/demo/shared-browser.js';
import { commitStatusStep } from '../../lib/cli/commands/demo/status.js';
import type { Output } from '../../lib/cli/output.js';
import { devServers, type DevServer } from '../../devserver/index.js';
import { examplesDir } from '../../lib/paths.js';
import { gantryBin } from '../analysis/gantry.js';

function capture(): Output & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    line: (text = '') => void lines.push(text),
    json: (value) => void lines.push(JSON.stringify(value)),
    table: () => undefined,
    note: (text) => void lines.push(text),
    progress: () => ({ update() {}, done() {} }),
  };
}

/**
 * Runs a printed command line in a shell, `gantry` being this checkout's built command (`npm run build` first). Asynchronous: the
 * server it talks to lives in this process.
 */
async function runPrinted(command: string, options: { cwd: string; env: NodeJS.ProcessEnv; input: string }) {
  const gantry = `gantry() { ${JSON.stringify(process.execPath)} ${JSON.stringify(gantryBin)} "$@"; }`;
  const child = spawn('sh', ['-c', `${gantry}\n${command}`], {
    cwd: options.cwd,
    env: { ...process.env, GANTRY_LOG: 'warn', ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(options.input);
  const [status] = (await once(child, 'close')) as [number | null];
  return { status, stdout, stderr };
}

describe('demo: the "try:" lines point at what outlives the demo', function () {
  this.timeout(120_000);
  const saved = {
    registry: process.env.GANTRY_DEV_REGISTRY_PORT,
    secrets: process.env.GANTRY_DEV_SECRETS_PORT,
    platform: process.env.GANTRY_DEV_PLATFORM_PORT,
  };
  const servers = new Map<string, DevServer>();
  let stateDir: string;
  let workDir: string;

  before(async () => {
    process.env.GANTRY_DEV_REGISTRY_PORT = '0';
    process.env.GANTRY_DEV_SECRETS_PORT = '0';
    process.env.GANTRY_DEV_PLATFORM_PORT = '0';
    stateDir = await mkdtemp(join(tmpdir(), 'gantry-demo-try-state-'));
    workDir = await mkdtemp(join(tmpdir(), 'gantry-demo-try-'));
    for (const starter of devServers.filter((s) => s.name === 'registry' || s.name === 'secrets' || s.name === 'platform')) {
      servers.set(starter.name, await starter.start({ host: '127.0.0.1', examplesDir: examplesDir(), stateDir }));
    }
  });
  after(async () => {
    for (const server of servers.values()) await server.stop();
    await rm(stateDir, { recursive: true, force: true });
    await rm(workDir, { recursive: true, force: true });
    for (const [name, value] of Object.entries(saved)) {
      const key = `GANTRY_DEV_${name.toUpperCase()}_PORT`;
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });

  function tryLine(lines: string[]): string {
    const found = lines.filter((line) => line.trimStart().startsWith('try: '));
    assert.equal(found.length, 1, lines.join('\n'));
    return found[0].trim().slice('try: '.length);
  }

  it('modules: gantry dev and the example manifest, not the demo folder or its registry', async () => {
    const out = capture();
    await modulesStep.run({ servers, out, workDir, examplesDir: examplesDir(), json: false, browser: new SharedBrowser() });
    const line = tryLine(out.lines);
    assert.ok(!line.includes(workDir), line);
    assert.ok(!line.includes(new URL(servers.get('registry')!.url).host), line);
    const match = /^gantry dev, then in another terminal, in a folder of your own: cp (\S+) \. && (gantry modules pin && gantry modules install)$/.exec(line);
    assert.ok(match, line);
    assert.equal(match[1], join(examplesDir(), 'gantry.modules.json'));
    assert.ok(existsSync(match[1]));
  });

  it('secrets: gantry dev and its export line; the printed commands work against its kv server', async () => {
    const out = capture();
    await secretsStep.run({ servers, out, workDir, examplesDir: examplesDir(), json: false, browser: new SharedBrowser() });
    const line = tryLine(out.lines);
    const server = servers.get('secrets')!;
    assert.ok(!line.includes(server.url), line);
    const match =
      /^gantry dev, then in another terminal, paste the export line it prints and: (gantry secrets put \S+ username=app password=-) \(the password from stdin\) && (gantry secrets get \S+)$/.exec(
        line,
      );
    assert.ok(match, line);
    // What the export line of `gantry dev` sets.
    const env = server.env ?? {};
    assert.deepEqual(Object.keys(env).sort(), ['SECRETS_ADDR', 'SECRETS_TOKEN']);
    const run = await runPrinted(`${match[1]} && ${match[2]} --field password`, { cwd: workDir, env, input: 'typed-at-the-prompt' });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /typed-at-the-prompt\s*$/);
  });

  it('commit-status: gantry dev and its export line; the printed status and rate-limit commands work against its platform API', async () => {
    const out = capture();
    await commitStatusStep.run({
      servers,
      out,
      workDir,
      examplesDir: examplesDir(),
      json: false,
      browser: new SharedBrowser(),
      results: { gate: { status: 'pass', scores: { performance: 1 } } },
    });
    const line = tryLine(out.lines);
    const server = servers.get('platform')!;
    assert.ok(!line.includes(server.url), line);
    const match =
      /^gantry dev, then in another terminal, paste the export line it prints and: (gantry platform status gantry\/demo [0-9a-f]{40} --state success --context gantry\/gate) && (gantry platform rate-limit)$/.exec(
        line,
      );
    assert.ok(match, line);
    assert.deepEqual(
      Object.keys(server.env ?? {})
        .filter((k) => k.startsWith('PLATFORM') || k.startsWith('GANTRY_PLATFORM'))
        .sort(),
      ['GANTRY_PLATFORM_TOKEN', 'PLATFORM_API_URL'],
    );
    const run = await runPrinted(`${match[1]} && ${match[2]}`, { cwd: workDir, env: server.env ?? {}, input: '' });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /^success for gantry\/gate on gantry\/demo@[0-9a-f]{12}/m);
    assert.match(run.stdout, /^core\s+5000\s/m);
  });
});
