import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, watch } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../../lib/errors.js';
import { runBrowserCheck, startChromeDriver, type ChromeDriver, type Session } from '../../lib/automation/index.js';
import { startHttpPeer, type HttpPeer } from '../peers/http.js';
import { makeTestPki } from '../peers/tls.js';

function html(title: string, body = ''): string {
  return `<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`;
}

/** A port on 127.0.0.1 where nothing listens: a peer started and closed. */
async function closedPort(): Promise<number> {
  const peer = await startHttpPeer(() => {});
  await peer.close();
  return peer.port;
}

describe('automation: the browser check against pages served on 127.0.0.1, through Debian chromedriver', function () {
  this.timeout(60_000);
  let driver: ChromeDriver;
  // Most checks share one browser session to keep the suite quick; two tests use fresh sessions and drivers.
  let session: Session;
  let site: HttpPeer;

  before(async () => {
    driver = await startChromeDriver();
    session = await driver.newSession();
    site = await startHttpPeer((request, response) => {
      const send = (status: number, body: string, headers: Record<string, string> = {}) => {
        response.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers });
        response.end(body);
      };
      switch (request.url.split('?')[0]) {
        case '/':
          return send(200, html('Gantry demo – home'));
        case '/late-title':
          return send(200, html('loading', '<script>setTimeout(() => { document.title = "Ready now"; }, 300)</script>'));
        case '/moved':
          return send(302, '', { location: '/' });
        case '/maintenance':
          return send(503, html('Down for maintenance'));
        case '/alert':
          return send(200, html('Nagging page', '<script>alert("subscribe!"); document.title = "Nagging page, after the alert";</script>'));
        case '/hang':
          return; // never answers: the page load times out
        // Replaces what the check reads: the check still reads what it can, it does not fail as a driver error.
        case '/hostile':
          return send(
            200,
            html(
              'Hostile page',
              '<script>Object.defineProperty(window, "performance", { get() { throw new Error("no"); } }); document.querySelector = null;</script>',
            ),
          );
        default:
          return send(404, html('Not found'));
      }
    });
  });

  after(async () => {
    await driver?.stop();
    await site?.close();
  });

  it('passes when the page loads with a 2xx and its title contains the text; the status comes from the browser navigation', async () => {
    const result = await runBrowserCheck({ url: `${site.url}/`, title: 'demo', driver });
    assert.equal(result.passed, true, result.reason);
    assert.equal(result.title, 'Gantry demo – home');
    assert.equal(result.status, 200);
    assert.equal(result.statusSource, 'browser');
    assert.equal(result.finalUrl, `${site.url}/`);
    assert.deepEqual(
      result.checks.map((c) => [c.name, c.passed]),
      [
        ['load', true],
        ['title', true],
        ['status', true],
      ],
    );
    assert.equal(result.reason, '');
    assert.match(result.browserVersion ?? '', /^\d+\./);
    // Its own session was deleted; only the shared one stays open.
    assert.deepEqual(driver.client.openSessions(), [session]);
  });

  it('equals is exact: a title that only contains the text fails, with the reason', async () => {
    const result = await runBrowserCheck({ url: `${site.url}/`, title: 'Gantry demo', titleMatch: 'equals', titleWaitMs: 0, session });
    assert.equal(result.passed, false);
    assert.equal(result.checks.find((c) => c.name === 'title')?.passed, false);
    assert.equal(result.reason, 'title: expected equals "Gantry demo", got "Gantry demo – home"');
    const exact = await runBrowserCheck({ url: `${site.url}/`, title: 'Gantry demo – home', titleMatch: 'equals', session });
    assert.equal(exact.passed, true, exact.reason);
  });

  it('waits for a title set by script after the load, within the title wait', async () => {
    const waited = await runBrowserCheck({ url: `${site.url}/late-title`, title: 'Ready now', titleWaitMs: 3_000, session });
    assert.equal(waited.passed, true, waited.reason);
    const impatient = await runBrowserCheck({ url: `${site.url}/late-title`, title: 'Ready now', titleWaitMs: 0, session });
    assert.equal(impatient.passed, false);
    assert.equal(impatient.title, 'loading');
  });

  it('a 404 page fails the default 2xx expectation, and passes when 404 is the expected status', async () => {
    const result = await runBrowserCheck({ url: `${site.url}/missing`, session });
    assert.equal(result.passed, false);
    assert.equal(result.status, 404);
    assert.equal(result.reason, 'status: expected 2xx, got 404');
    const expected = await runBrowserCheck({ url: `${site.url}/missing`, status: 404, title: 'Not found', session });
    assert.equal(expected.passed, true, expected.reason);
    const unchecked = await runBrowserCheck({ url: `${site.url}/maintenance`, status: 'any', session });
    assert.equal(unchecked.passed, true);
    assert.equal(unchecked.status, 503);
  });

  it('a page that opens alert() on load does not block the check: the prompt is dismissed', async () => {
    const result = await runBrowserCheck({ url: `${site.url}/alert`, title: 'after the alert', driver });
    assert.equal(result.passed, true, result.reason);
  });

  it('follows redirects: the final URL and its status are reported', async () => {
    const result = await runBrowserCheck({ url: `${site.url}/moved`, title: 'home', session });
    assert.equal(result.passed, true, result.reason);
    assert.equal(result.finalUrl, `${site.url}/`);
    assert.equal(result.status, 200);
  });

  it('statusSource http: the status comes from a separate GET through the HTTP core, with our user agent', async () => {
    site.requests.length = 0;
    const result = await runBrowserCheck({ url: `${site.url}/maintenance`, status: 503, statusSource: 'http', session });
    assert.equal(result.passed, true, result.reason);
    assert.equal(result.statusSource, 'http');
    assert.equal(result.status, 503);
    const ours = site.requests.filter((r) => /^gantry\//.test(String(r.headers['user-agent'])));
    assert.equal(ours.length, 1);
    assert.equal(ours[0]?.url, '/maintenance');
  });

  it('a port where nothing listens fails the load check (never a pass), with the network error', async () => {
    const port = await closedPort();
    const result = await runBrowserCheck({ url: `http://127.0.0.1:${port}/`, title: 'anything', session });
    assert.equal(result.passed, false);
    assert.equal(result.loadError, 'ERR_CONNECTION_REFUSED');
    assert.deepEqual(result.checks, [{ name: 'load', expected: 'the page loads', actual: 'ERR_CONNECTION_REFUSED', passed: false }]);
    assert.equal(result.status, null);
    assert.deepEqual(driver.client.openSessions(), [session]);
  });

  it('a page that never answers fails with a page-load timeout', async () => {
    const result = await runBrowserCheck({ url: `${site.url}/hang`, pageLoadTimeoutMs: 1_500, session });
    assert.equal(result.passed, false);
    assert.equal(result.loadError, 'page load timed out after 1500 ms');
  });

  describe('page verdicts are failed checks, not driver failures (WebDriver errors about the page → the load check fails, exit 1)', () => {
    it('a page-load timeout shorter than the page needs: the load check fails naming the timeout, whichever command hit it', async () => {
      // --timeout 1: the navigation may return in time, and the next command then times out waiting for the page.
      const result = await runBrowserCheck({ url: `${site.url}/`, title: 'home', pageLoadTimeoutMs: 1, driver });
      assert.equal(result.passed, false);
      assert.equal(result.loadError, 'page load timed out after 1 ms');
      assert.deepEqual(result.checks, [{ name: 'load', expected: 'the page loads', actual: 'page load timed out after 1 ms', passed: false }]);
      assert.deepEqual(driver.client.openSessions(), [session]);
    });

    it('an untrusted TLS certificate and an unknown host fail the load check with the network error name', async () => {
      const pki = makeTestPki();
      const tls = await startHttpPeer(
        (_request, response) => {
          response.end(html('TLS page'));
        },
        { tls: { cert: pki.cert, key: pki.key } },
      );
      try {
        const untrusted = await runBrowserCheck({ url: `${tls.url}/`, session });
        assert.equal(untrusted.passed, false);
        assert.equal(untrusted.loadError, 'ERR_CERT_AUTHORITY_INVALID');
      } finally {
        await tls.close();
        pki.remove();
      }
      const unknown = await runBrowserCheck({ url: 'http://gantry-test.invalid/', session });
      assert.equal(unknown.loadError, 'ERR_NAME_NOT_RESOLVED');
    });

    it('a page that breaks the objects the check reads is still checked (title and status read where they can be)', async () => {
      const result = await runBrowserCheck({ url: `${site.url}/hostile`, title: 'Hostile', session });
      assert.equal(result.checks.find((c) => c.name === 'load')?.passed, true);
      assert.equal(result.checks.find((c) => c.name === 'title')?.passed, true, result.reason);
      // The browser could not tell the status, so it came from a separate GET.
      assert.equal(result.status, 200);
    });
  });

  it('credentials in the URL never appear in the result', async () => {
    const withUser = site.url.replace('http://', 'http://deploy:hunter2secret@');
    const result = await runBrowserCheck({ url: `${withUser}/?token=abcdef123456`, title: 'home', session });
    assert.equal(result.passed, true, result.reason);
    const text = JSON.stringify(result);
    assert.doesNotMatch(text, /hunter2secret|abcdef123456/);
    assert.match(result.url, /REDACTED/);
  });

  it('bad input is a usage error before any browser starts: relative, non-http URLs, bad status, empty title', async () => {
    for (const options of [
      { url: '/relative' },
      { url: 'file:///etc/passwd' },
      { url: 'javascript:alert(1)' },
      { url: `${site.url}/`, status: 42 },
      { url: `${site.url}/`, title: '' },
      { url: `${site.url}/`, titleMatch: 'regex' as 'equals' },
      { url: `${site.url}/`, pageLoadTimeoutMs: -1 },
    ]) {
      await assert.rejects(
        runBrowserCheck({ ...options, driver }),
        (error: unknown) => error instanceof UsageError && error.exitCode === 2,
        JSON.stringify(options),
      );
    }
  });

  it('without a driver given, starts one for the check and stops it afterwards', async () => {
    // The check's driver folder goes under a temporary directory of this test's own: other test files, running beside
    // this one, start and stop drivers of their own in the shared one.
    const own = mkdtempSync(join(tmpdir(), 'gantry-check-tmp-'));
    const created = new Set<string>();
    const watcher = watch(own, (_event, name) => {
      if (name?.startsWith('gantry-webdriver-')) created.add(name);
    });
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = own;
    try {
      const result = await runBrowserCheck({ url: `${site.url}/`, title: 'home' });
      assert.equal(result.passed, true, result.reason);
      assert.ok(created.size > 0, 'the check made no driver folder of its own');
      const left = readdirSync(own).filter((name) => name.startsWith('gantry-webdriver-'));
      assert.deepEqual(left, [], `left behind: ${left.join(', ')}`);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
      watcher.close();
      rmSync(own, { recursive: true, force: true });
    }
  });
});
