import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync, chmodSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  DriverProcessError,
  WebDriverError,
  createWebDriverClient,
  isWebDriverError,
  startChromeDriver,
  webDriverErrorStatus,
  withSession,
  type ChromeDriver,
} from '../../lib/automation/index.js';
import { chromeCapabilities } from '../../lib/automation/chrome.js';
import { commandLinesMentioning, disabledFeaturesOf } from '../browser/processes.js';
import { startHttpPeer, type HttpPeer } from '../peers/http.js';
import { recordedSessionId, startW3cRemote, unknownMethodBody } from './w3c-remote.js';

/** Processes (not zombies: nothing reaps orphans in this container) in a process group, or with a pid, from /proc. */
function liveProcesses(match: { pgid?: number; pid?: number }): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses, so split after the last ')'.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (state === 'Z' || state === 'X') continue;
    if (match.pgid !== undefined && Number(pgrp) === match.pgid) found.push(Number(entry));
    if (match.pid !== undefined && Number(entry) === match.pid) found.push(Number(entry));
  }
  return found;
}

function groupAlive(pgid: number): boolean {
  return liveProcesses({ pgid }).length > 0;
}

function processAlive(pid: number): boolean {
  return liveProcesses({ pid }).length > 0;
}

/** SIGKILL is sent at once, but a loaded machine can take a moment to tear a big process down. */
async function goneWithin(check: () => boolean, ms = 5_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (check()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('expected the promise to reject');
}

/** The local addresses of the sockets listening on `port`, from /proc/net/tcp and tcp6 (Linux). */
function listenersOn(port: number): string[] {
  const addresses: string[] = [];
  for (const [file, v6] of [
    ['/proc/net/tcp', false],
    ['/proc/net/tcp6', true],
  ] as const) {
    const table = existsSync(file) ? readFileSync(file, 'utf8') : '';
    for (const line of table.split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (!local || state !== '0A') continue; // 0A: LISTEN
      const [hex, portHex] = local.split(':');
      if (parseInt(portHex!, 16) !== port) continue;
      if (!v6)
        addresses.push(
          hex!
            .match(/../g)!
            .reverse()
            .map((byte) => parseInt(byte, 16))
            .join('.'),
        );
      else addresses.push(/^0{24}01000000$/i.test(hex!) ? '::1' : /^0{32}$/.test(hex!) ? '::' : hex!);
    }
  }
  return addresses;
}

describe('automation: W3C WebDriver client against Debian chromedriver', function () {
  this.timeout(60_000);
  let driver: ChromeDriver;
  let site: HttpPeer;

  before(async () => {
    driver = await startChromeDriver();
    site = await startHttpPeer((request, response) => {
      if (request.url === '/') {
        response.writeHead(200, { 'content-type': 'text/html' });
        response.end('<!doctype html><html><head><title>Gantry test page</title></head><body>ok</body></html>');
        return;
      }
      if (request.url === '/sign-in') {
        response.writeHead(200, { 'content-type': 'text/html', 'set-cookie': ['sid=f3a9c1d07b2e; Path=/; HttpOnly', 'theme=dark; Path=/'] });
        response.end('<!doctype html><title>Signed in</title>');
        return;
      }
      response.writeHead(404, { 'content-type': 'text/html' });
      response.end('<!doctype html><title>Not here</title>');
    });
  });

  after(async () => {
    await driver?.stop();
    await site?.close();
  });

  it('the driver listens on loopback only and reports ready on /status', async () => {
    assert.match(driver.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    // What the kernel says is listening on the driver's port: every such socket is bound to a loopback address.
    const port = Number(new URL(driver.url).port);
    const listening = listenersOn(port);
    assert.ok(listening.length > 0, `nothing listens on port ${port}`);
    for (const address of listening) assert.ok(address === '127.0.0.1' || address === '::1', `the driver listens on ${address}`);
    const status = await driver.client.status();
    assert.equal(status.ready, true);
  });

  it('AUT-ST-CREATE-SESSION AUT-EP-NEW-SESSION AUT-ST-END-SESSION: POST /session creates a session, DELETE ends it, and the ended session is gone', async () => {
    const session = await driver.newSession();
    assert.match(session.id, /^[0-9a-f]{16,}$/);
    assert.equal(session.shape, 'w3c');
    assert.equal(session.capabilities.browserName, 'chrome');
    assert.deepEqual(
      driver.client.openSessions().map((s) => s.id),
      [session.id],
    );
    await session.delete();
    assert.equal(session.isEnded, true);
    assert.deepEqual(driver.client.openSessions(), []);
    const error = await rejection(driver.client.command('GET', `/session/${session.id}/title`));
    assert.ok(isWebDriverError(error, 'invalid session id'), String(error));
    assert.equal(error.status, 404);
    // Deleting again is a no-op, not an error.
    await session.delete();
  });

  it('AUT-NEW-SESSION-RESPONSE: the {sessionId, value} shape (chromedriver in legacy mode) is read, commands and delete work', async () => {
    const profile = mkdtempSync(join(tmpdir(), 'gantry-test-profile-'));
    try {
      const request = chromeCapabilities({ binary: driver.chromePath, userDataDir: profile, legacyProtocol: true });
      const session = await driver.client.newSession({}, { desiredCapabilities: request.alwaysMatch ?? {} });
      assert.equal(session.shape, 'legacy');
      assert.match(session.id, /^[0-9a-f]{16,}$/);
      assert.equal(session.capabilities.browserName, 'chrome');
      await session.navigateTo(`${site.url}/`);
      assert.equal(await session.getTitle(), 'Gantry test page');
      // A legacy error ({status: 61, value: {message}}) is typed by its W3C code too.
      const error = await rejection(session.navigateTo('not a url'));
      assert.ok(isWebDriverError(error, 'invalid argument'), String(error));
      await session.delete();
      assert.equal(session.isEnded, true);
    } finally {
      rmSync(profile, { recursive: true, force: true });
    }
  });

  it("a session's Chromium starts without the omnibox's WebUI renderer (half of a headless launch's CPU), our features merged into chromedriver's --disable-features", async () => {
    const profile = mkdtempSync(join(tmpdir(), 'gantry-test-profile-'));
    const commandLines = () => commandLinesMentioning(`--user-data-dir=${profile}`).map(({ line }) => line);
    try {
      const session = await driver.client.newSession(chromeCapabilities({ binary: driver.chromePath, userDataDir: profile }));
      try {
        await session.navigateTo(`${site.url}/`);
        // The popups' renderer starts within a second or two of the browser (with the features on: 1.5–1.9 s of CPU).
        const deadline = Date.now() + 3_000;
        let renderers: string[] = [];
        while (Date.now() < deadline) {
          renderers = commandLines().filter((line) => line.includes(' --type=renderer'));
          if (renderers.some((line) => line.includes(' --top-chrome-webui'))) break;
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
        assert.ok(renderers.length > 0, "the page's renderer is found");
        assert.deepEqual(
          renderers.filter((line) => line.includes(' --top-chrome-webui')),
          [],
          'no renderer for the top chrome',
        );
        const browser = commandLines().find((line) => !line.includes(' --type='));
        const off = disabledFeaturesOf(browser ?? '');
        for (const name of ['WebUIOmniboxPopup', 'WebUIOmniboxAimPopup', 'Translate']) assert.ok(off.includes(name), `${name} off: ${off.join(',')}`);
      } finally {
        await session.delete();
      }
    } finally {
      rmSync(profile, { recursive: true, force: true });
    }
  });

  it('navigates, reads the title and the current URL', async () => {
    const result = await driver.withSession(async (session) => {
      await session.navigateTo(`${site.url}/`);
      return { title: await session.getTitle(), url: await session.getCurrentUrl() };
    });
    assert.deepEqual(result, { title: 'Gantry test page', url: `${site.url}/` });
    assert.deepEqual(driver.client.openSessions(), []);
  });

  it('deleteAllCookies (Delete All Cookies, DELETE /session/{id}/cookie): the cookies of the current host are gone on every port of it, HttpOnly ones too', async () => {
    const otherPort = await startHttpPeer((request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<!doctype html><title>Other port</title>');
    });
    try {
      const seen = await driver.withSession(async (session) => {
        // What the browser would send: the cookie header a page on this host (any port) gets, HttpOnly included.
        const cookieSent = async () => {
          await session.navigateTo(`${otherPort.url}/`);
          return otherPort.requests.filter((request) => request.url === '/').at(-1)?.headers.cookie ?? '';
        };
        await session.navigateTo(`${site.url}/sign-in`);
        const before = await cookieSent();
        await session.deleteAllCookies();
        const after = await cookieSent();
        return { before, after, script: await session.executeScript('return document.cookie') };
      });
      assert.equal(seen.before, 'sid=f3a9c1d07b2e; theme=dark', 'the cookies set on one port are sent to another port of the host');
      assert.deepEqual([seen.after, seen.script], ['', ''], 'no cookie left for the host');
    } finally {
      await otherPort.close();
    }
  });

  it('withSession deletes the session when the work throws, and rethrows the work error', async () => {
    let id = '';
    const error = await rejection(
      driver.withSession(async (session) => {
        id = session.id;
        throw new Error('work failed');
      }),
    );
    assert.equal((error as Error).message, 'work failed');
    assert.deepEqual(driver.client.openSessions(), []);
    const gone = await rejection(driver.client.command('GET', `/session/${id}/url`));
    assert.ok(isWebDriverError(gone, 'invalid session id'));
  });

  it('invalid argument: navigating to a relative URL is a typed 400 error', async () => {
    await driver.withSession(async (session) => {
      const error = await rejection(session.navigateTo('/relative'));
      assert.ok(error instanceof WebDriverError);
      assert.equal(error.code, 'invalid argument');
      assert.equal(error.status, 400);
      assert.equal(error.expectedStatus, 400);
      assert.equal(error.exitCode, 3);
      assert.match(error.message, /^POST \/session\/[0-9a-f]+\/url answered 400 invalid argument/);
      assert.ok(error.hint);
    });
  });

  it('unknown command: an endpoint the driver does not have is a typed 404 error', async () => {
    await driver.withSession(async (session) => {
      const error = await rejection(driver.client.command('GET', `${session.path}/no-such-command`));
      assert.ok(isWebDriverError(error, 'unknown command'), String(error));
      assert.equal(error.status, 404);
    });
  });

  it('AUT-EP-OTHER-METHOD-SESSION (measured deviation): chromedriver answers GET /session/<id> with 404 unknown command, not unknown method', async () => {
    await driver.withSession(async (session) => {
      const error = await rejection(driver.client.command('GET', session.path));
      assert.ok(error instanceof WebDriverError);
      // If a future chromedriver conforms, this becomes `unknown method`/405 and the client types it all the same.
      assert.ok(['unknown command', 'unknown method'].includes(error.code), error.code);
      assert.equal(error.status, webDriverErrorStatus[error.code]);
    });
  });

  it('session not created: a browser binary that does not exist is a typed 500 error, and no session is left', async () => {
    const profile = mkdtempSync(join(tmpdir(), 'gantry-test-profile-'));
    try {
      const error = await rejection(driver.client.newSession(chromeCapabilities({ binary: '/nonexistent/chromium', userDataDir: profile })));
      assert.ok(isWebDriverError(error, 'session not created'), String(error));
      assert.equal(error.status, 500);
      assert.match(error.remoteMessage, /no chrome binary/);
      assert.deepEqual(driver.client.openSessions(), []);
    } finally {
      rmSync(profile, { recursive: true, force: true });
    }
  });

  it('invalid session id: a session id the driver never issued is a typed 404 error; odd ids are escaped in the path', async () => {
    const error = await rejection(driver.client.command('GET', `/session/${encodeURIComponent('../status')}/title`));
    assert.ok(isWebDriverError(error, 'invalid session id'), String(error));
    assert.equal(error.status, 404);
  });
});

describe('automation: the unknown method error against a mock W3C remote end (no real peer here produces it)', () => {
  let remote: HttpPeer;
  before(async () => {
    remote = await startW3cRemote();
  });
  after(async () => {
    await remote?.close();
  });

  it('AUT-ERR-UNKNOWN-METHOD AUT-ERR-BODY AUT-EP-OTHER-METHOD-SESSION: GET /session/<id> yields `unknown method` (405) with {value: {error, message, stacktrace}}', async () => {
    const client = createWebDriverClient({ url: remote.url });
    try {
      const session = await client.newSession({});
      const error = await rejection(client.command('GET', session.path));
      assert.ok(isWebDriverError(error, 'unknown method'), String(error));
      assert.equal(error.status, 405);
      assert.equal(error.expectedStatus, 405);
      assert.equal(error.remoteMessage, unknownMethodBody.value.message);
      assert.equal(error.stacktrace, unknownMethodBody.value.stacktrace);
      assert.match(error.hint ?? '', /method/);
      await session.delete();
    } finally {
      client.close();
    }
  });

  it('AUT-NEW-SESSION-RESPONSE AUT-EP-NEW-SESSION AUT-EP-END-SESSION AUT-ST-END-SESSION: {sessionId, value} is read; the request body is a JSON object; DELETE answers {} and the session ends', async () => {
    const client = createWebDriverClient({ url: remote.url });
    try {
      remote.requests.length = 0;
      const result = await withSession(client, { alwaysMatch: { browserName: 'recorded' } }, async (session) => {
        assert.equal(session.shape, 'legacy');
        return { id: session.id, capabilities: session.capabilities };
      });
      assert.deepEqual(result, { id: recordedSessionId, capabilities: { browserName: 'recorded', acceptInsecureCerts: false } });
      const [create, remove] = remote.requests;
      assert.equal(create?.method, 'POST');
      assert.equal(create?.url, '/session');
      assert.match(String(create?.headers['content-type']), /^application\/json/);
      const sent = JSON.parse(create?.body ?? '') as { capabilities: { alwaysMatch: unknown } };
      assert.deepEqual(sent.capabilities.alwaysMatch, { browserName: 'recorded' });
      assert.equal(remove?.method, 'DELETE');
      assert.equal(remove?.url, `/session/${recordedSessionId}`);
      assert.deepEqual(client.openSessions(), []);
      // The session really ended on the remote end: a second DELETE is `invalid session id`.
      const again = await rejection(client.command('DELETE', `/session/${recordedSessionId}`));
      assert.ok(isWebDriverError(again, 'invalid session id'));
    } finally {
      client.close();
    }
  });
});

describe('automation: the driver process is always stopped', function () {
  this.timeout(60_000);

  it('stop() ends open sessions, the driver, its browsers, and removes the temporary profiles', async () => {
    const driver = await startChromeDriver();
    const session = await driver.newSession();
    const browserPid = session.capabilities['goog:processID'];
    assert.equal(typeof browserPid, 'number');
    assert.equal(existsSync(driver.profilesDir), true);
    assert.equal(readdirSync(driver.profilesDir).length, 1);
    await driver.stop();
    assert.equal(session.isEnded, true);
    assert.equal(groupAlive(driver.pid), false);
    assert.equal(processAlive(driver.pid), false);
    assert.equal(processAlive(browserPid as number), false);
    assert.equal(existsSync(driver.profilesDir), false);
    await driver.stop();
  });

  it('Ctrl-C (SIGINT) in the middle of a run stops the driver and its browser and removes the profiles', async () => {
    const script = join(dirname(fileURLToPath(import.meta.url)), 'interrupted-run.ts');
    const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    while (!output.includes('\n')) {
      if (child.exitCode !== null) assert.fail(`the child exited early: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const running = JSON.parse(output.split('\n')[0] ?? '') as { pid: number; browserPid: number; profilesDir: string };
    assert.equal(groupAlive(running.pid), true);
    assert.equal(existsSync(running.profilesDir), true);
    child.kill('SIGINT');
    assert.equal(await exited, 'SIGINT');
    assert.equal(await goneWithin(() => groupAlive(running.pid)), true, 'the driver group is gone');
    assert.equal(await goneWithin(() => processAlive(running.browserPid)), true, 'the browser is gone');
    assert.equal(existsSync(running.profilesDir), false);
  });

  it('a driver that exits at once fails with its output, and leaves no folder behind', async () => {
    // A temporary folder of this test's own: counting the machine's gantry-webdriver-* folders raced the other test
    // files' drivers in the parallel run. os.tmpdir() reads TMPDIR at each call.
    const own = mkdtempSync(join(tmpdir(), 'gantry-test-tmp-'));
    const given = process.env.TMPDIR;
    process.env.TMPDIR = own;
    try {
      const error = await rejection(startChromeDriver({ driverPath: '/bin/false', startupTimeoutMs: 5_000 }));
      assert.ok(error instanceof DriverProcessError, String(error));
      assert.match(error.message, /exited before it was ready/);
      assert.equal(error.exitCode, 3);
      assert.deepEqual(readdirSync(own), [], 'the profiles folder is removed');
    } finally {
      if (given === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = given;
      rmSync(own, { recursive: true, force: true });
    }
  });

  it('a driver that never gets ready is killed after the startup timeout', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gantry-test-fake-driver-'));
    try {
      const fake = join(dir, 'chromedriver');
      const pidFile = join(dir, 'pid');
      writeFileSync(fake, `#!/bin/sh\necho $$ > ${pidFile}\necho "pretending to start"\nexec sleep 30\n`);
      chmodSync(fake, 0o755);
      const started = Date.now();
      const error = await rejection(startChromeDriver({ driverPath: fake, startupTimeoutMs: 700 }));
      assert.ok(error instanceof DriverProcessError, String(error));
      assert.match(error.message, /did not report ready within 700 ms: pretending to start/);
      assert.ok(Date.now() - started < 5_000);
      assert.equal(processAlive(Number(readFileSync(pidFile, 'utf8'))), false, 'the fake driver was killed');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
