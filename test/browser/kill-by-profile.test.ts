// A browser process that has left the process group it was started in (a relaunch, a helper that called setsid) is
// still ended with its browser: lib/browser/processes.ts kills by the profile folder, which only that browser names.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { killProcessesNaming } from '../../lib/browser/index.js';
import { processesMentioning } from './processes.js';

const idle = 'setInterval(() => {}, 1000)';
const waitFor = async (what: string, check: () => boolean, ms = 10_000) => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

describe('lib/browser: processes killed by the profile they name', function () {
  this.timeout(60_000);
  let dir: string;
  let standIn: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'gantry-kill-by-profile-'));
    // A stand-in for Chromium: it starts a process in a session of its own that names the profile (as a browser
    // process out of its group would), says DevTools listens, and waits.
    standIn = join(dir, 'stand-in-browser');
    writeFileSync(
      standIn,
      [
        `#!${process.execPath}`,
        "const { spawn } = require('node:child_process');",
        "const profile = process.argv.find((arg) => arg.startsWith('--user-data-dir='));",
        `spawn(process.execPath, ['-e', ${JSON.stringify(idle)}, '--', profile], { detached: true, stdio: 'ignore' }).unref();`,
        "process.stderr.write('DevTools listening on ws://127.0.0.1:9/devtools/browser/x\\n');",
        idle,
        '',
      ].join('\n'),
    );
    chmodSync(standIn, 0o755);
  });
  // Whatever a failing test left running is ended here (by the test's own helper), so it cannot outlive the run.
  const profiles: string[] = [];
  afterEach(() => {
    for (const profile of profiles.splice(0))
      for (const pid of processesMentioning(profile)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('kills every process naming the marker, in whatever session, and no other', async () => {
    const marker = join(dir, 'profile-a');
    const other = join(dir, 'profile-b');
    profiles.push(marker, other);
    const named = spawn(process.execPath, ['-e', idle, '--', `--user-data-dir=${marker}`], { detached: true, stdio: 'ignore' });
    const escaped = spawn(process.execPath, ['-e', idle, '--', marker], { detached: true, stdio: 'ignore' });
    const unrelated = spawn(process.execPath, ['-e', idle, '--', other], { detached: true, stdio: 'ignore' });
    try {
      await waitFor('the three processes', () => processesMentioning(marker).length === 2 && processesMentioning(other).length === 1);
      assert.equal(killProcessesNaming(marker), 2);
      await waitFor('the two naming the marker to end', () => processesMentioning(marker).length === 0);
      assert.equal(unrelated.exitCode, null, 'a process naming another folder lives on');
      assert.deepEqual(processesMentioning(other), [unrelated.pid]);
      assert.equal(killProcessesNaming(''), 0, 'an empty marker kills nothing (it would name every process)');
      assert.deepEqual(processesMentioning(other), [unrelated.pid]);
    } finally {
      for (const child of [named, escaped, unrelated]) child.kill('SIGKILL');
    }
  });

  it("close() ends a browser process that left the browser's group, and removes the profile", async () => {
    const { launchBrowser } = await import('../../lib/analysis/chrome.js');
    const browser = await launchBrowser({ chromePath: standIn, startTimeoutMs: 20_000 });
    profiles.push(browser.profileDir);
    await waitFor('the escaped process', () => processesMentioning(browser.profileDir).length === 2);
    await browser.close();
    await waitFor('every process naming the profile to end', () => processesMentioning(browser.profileDir).length === 0);
    assert.equal(existsSync(browser.profileDir), false);
  });

  it("Ctrl-C (the emergency clean-up) ends a browser process that left the browser's group, and removes the profile", async () => {
    const chromeModule = fileURLToPath(new URL('../../lib/analysis/chrome.ts', import.meta.url));
    const script = `const { launchBrowser } = await import(${JSON.stringify(chromeModule)}); const b = await launchBrowser({ chromePath: ${JSON.stringify(standIn)} }); console.log(b.profileDir); setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    await waitFor('the browser to start', () => out.includes('\n'), 30_000);
    const profile = out.trim();
    profiles.push(profile);
    await waitFor('the escaped process', () => processesMentioning(profile).length === 2);
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    child.kill('SIGINT');
    assert.equal(await exited, 'SIGINT', 'the process died by the interrupt');
    await waitFor('every process naming the profile to end', () => processesMentioning(profile).length === 0);
    assert.equal(existsSync(profile), false);
  });
});
