// Issue 26's "docs against behaviour" class, the small cases a new user met: what one command prints must work when
// pasted into the next (dev's exports into doctor and modules, doctor's issuer into mcp serve), hints name the right
// kind of value, and a "no" says why it is a no (a file name Node could not receive, a file with no content yet).
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startOAuthServer, type OAuthServer } from '../../devserver/oauth/index.js';
import { redactUrl } from '../../lib/redact.js';
import { harness, TOKEN, type Harness } from '../devserver/storage/helpers.js';
import { runBuiltGantry, startGantry, stopGantry, type GantryRun } from './gantry-process.js';

const gantry = (args: string[], env: Record<string, string | undefined>, options: { shell?: string; cwd?: string } = {}): Promise<GantryRun> =>
  runBuiltGantry(args, { HOME: process.env.HOME, ...env }, options);

/** `export A=1 B=2` lines as a gantry dev user pastes them. */
function exported(stdout: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of stdout.split('\n').filter((l) => l.startsWith('export '))) {
    for (const pair of line.slice('export '.length).split(' ')) {
      const at = pair.indexOf('=');
      env[pair.slice(0, at)] = pair.slice(at + 1).replace(/^'|'$/g, '');
    }
  }
  return env;
}

describe('DOCS-AGREE: what one command prints works in the next, and a "no" says why', function () {
  this.timeout(120_000);

  it('DOCS-AGREE-DEV-EXPORTS: gantry dev exports GANTRY_REGISTRY_HOST, so doctor checks the registry and modules resolve without a host, right after pasting', async () => {
    const ports = {
      GANTRY_DEV_REGISTRY_PORT: '0',
      GANTRY_DEV_SECRETS_PORT: '0',
      GANTRY_DEV_PAGEANALYSIS_PORT: '0',
      GANTRY_DEV_PLATFORM_PORT: '0',
      GANTRY_DEV_OAUTH_PORT: '0',
      GANTRY_DEV_STORAGE_PORT: '0',
    };
    const { child, value: env } = await startGantry(['dev'], (out) => (out.includes('Press Ctrl-C') ? exported(out) : undefined), ports);
    try {
      assert.match(env.GANTRY_REGISTRY_HOST ?? '', /^127\.0\.0\.1:\d+$/, 'the registry host is exported');
      const doctor = await gantry(['doctor', '--json'], env);
      const checks = JSON.parse(doctor.stdout) as { checks: { check: string; status: string; detail: string }[] };
      const registry = checks.checks.find((c) => /registry/i.test(c.check));
      assert.equal(registry?.status, 'ok', `doctor: ${doctor.stdout}`);
      const resolved = await gantry(['modules', 'resolve', 'gantry/network/aws', '--json'], env);
      assert.equal(resolved.code, 0, resolved.stderr);
      assert.ok(resolved.stdout.includes(env.GANTRY_REGISTRY_HOST!), 'resolved against the exported host');
    } finally {
      await stopGantry(child);
    }
  });

  it("DOCS-AGREE-DEV-EXPORTS: gantry dev registry alone prints the same export line, with the token under its host's variable when one is required", async () => {
    const { child, value: env } = await startGantry(['dev', 'registry', '--port', '0'], (out) => (out.includes('Press Ctrl-C') ? exported(out) : undefined), {
      GANTRY_DEV_REGISTRY_TOKEN: 'dev-registry-token-1',
    });
    try {
      assert.match(env.GANTRY_REGISTRY_HOST ?? '', /^127\.0\.0\.1:\d+$/);
      assert.equal(env.GANTRY_TOKEN_127_0_0_1, 'dev-registry-token-1');
      const resolved = await gantry(['modules', 'resolve', 'gantry/network/aws'], env);
      assert.equal(resolved.code, 0, `the pasted token is used: ${resolved.stderr}`);
    } finally {
      await stopGantry(child);
    }
  });

  describe("the context server's authorization server", () => {
    let oauth: OAuthServer;
    before(async () => {
      oauth = await startOAuthServer({ host: '127.0.0.1', port: 0 });
    });
    after(() => oauth.stop());

    it('DOCS-AGREE-ISSUER: doctor prints the issuer as given (no slash added), and mcp serve starts with what doctor printed', async () => {
      const issuer = oauth.url.replace(/\/$/, '');
      const doctor = await gantry(['doctor', '--json'], { GANTRY_MCP_AUTHORIZATION_SERVER: issuer });
      const check = (JSON.parse(doctor.stdout) as { checks: { check: string; status: string; detail: string }[] }).checks.find((c) =>
        /context server/i.test(c.check),
      );
      assert.equal(check?.status, 'ok', doctor.stdout);
      const printed = /^(\S+): issuer matches/.exec(check!.detail)?.[1];
      assert.equal(printed, issuer, 'the issuer exactly as configured');
      const { child, value } = await startGantry(['mcp', 'serve', '--port', '0', '--authorization-server', printed!], (out) =>
        out.includes('context server on') ? out : undefined,
      );
      await stopGantry(child);
      assert.ok(value.includes(`from ${issuer}`), value);
    });

    it("DOCS-AGREE-ISSUER: an issuer that differs from the server's only by a trailing slash is refused with the spelling to use", async () => {
      const issuer = oauth.url.replace(/\/$/, '');
      const run = await gantry(['mcp', 'serve', '--port', '0', '--authorization-server', `${issuer}/`], {});
      assert.notEqual(run.code, 0);
      assert.match(run.stderr, new RegExp(`^hint: give the issuer exactly as the server names it: ${issuer.replace(/[.]/g, '\\.')} `, 'm'));
    });

    it("DOCS-AGREE-HINTS: --authorization-server not-a-url is exit 2 with an authorization server's URL as the example, not a context server's", async () => {
      const run = await gantry(['mcp', 'serve', '--port', '0', '--authorization-server', 'not-a-url'], {});
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, /^error: --authorization-server "?not-a-url"? is not an absolute URL$/m);
      assert.match(run.stderr, /^hint: give it with its scheme, e\.g\. https:\/\/auth\.example\.com$/m);
      assert.doesNotMatch(run.stderr, /\/mcp\b/);
    });
  });

  it('DOCS-AGREE-URLS: a URL with nothing to mask is printed as given; one with credentials or a token in its query is still masked', () => {
    assert.equal(redactUrl('http://127.0.0.1:4444'), 'http://127.0.0.1:4444');
    assert.equal(redactUrl('https://Example.com/a/../b'), 'https://Example.com/a/../b');
    assert.doesNotMatch(redactUrl('https://user:pw-secret-1@example.com'), /pw-secret-1|user/);
    assert.doesNotMatch(redactUrl('https://example.com/cb?access_token=tok-secret-2&x=1'), /tok-secret-2/);
    assert.doesNotMatch(redactUrl(new URL('https://example.com/?next=https%3A%2F%2Fa%3Apw-secret-3%40b.example')), /pw-secret-3/);
  });

  describe('gantry storage', () => {
    let h: Harness;
    let dir: string;
    before(async () => {
      h = await harness();
      dir = await mkdtemp(join(tmpdir(), 'gantry-docs-agree-'));
    });
    after(async () => {
      await h.close();
      await rm(dir, { recursive: true, force: true });
    });
    const env = () => ({ STORAGE_BASE_URL: h.server.url, STORAGE_TOKEN: TOKEN, HOME: dir, XDG_STATE_HOME: dir, GANTRY_CONFIG_DIR: dir });

    it('DOCS-AGREE-NAMES: put of a file whose name is not UTF-8 says why it cannot be opened and what to do, not that it does not exist (exit 2, nothing sent)', async () => {
      await writeFile(Buffer.from(join(dir, 'caf\xe9.txt'), 'latin1'), 'latin-1 name\n');
      const before = (await h.api('GET', '/storage/v2/files')).body.items.length as number;
      const run = await gantry([], env(), { shell: '"$NODE" "$GANTRY" storage put "$(printf \'caf\\351.txt\')"', cwd: dir });
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, /^error: the file to upload .*caf\uFFFD\.txt.* cannot be opened by that name: it holds U\+FFFD, .*not UTF-8/m);
      assert.doesNotMatch(run.stderr, /does not exist/);
      assert.match(run.stderr, /^hint: rename the file to a UTF-8 name/m);
      assert.equal((await h.api('GET', '/storage/v2/files')).body.items.length, before, 'nothing was uploaded');
      const missing = await gantry(['storage', 'put', join(dir, 'nope.txt')], env());
      assert.equal(missing.code, 2);
      assert.match(missing.stderr, /nope\.txt.* does not exist/);
    });

    it('DOCS-AGREE-REVISIONS: revisions of a file of metadata only says it holds metadata only; of a folder, that a folder keeps none', async () => {
      const file = (await h.api('POST', '/storage/v2/files', { title: 'metadata-only' })).body;
      const folder = (await h.api('POST', '/storage/v2/files', { title: 'a folder', mimeType: 'application/vnd.google-apps.folder' })).body;
      const ofFile = await gantry(['storage', 'revisions', file.id], env());
      assert.equal(ofFile.code, 0, ofFile.stderr);
      assert.match(ofFile.stderr, new RegExp(`${file.id} has no revisions \\(it holds metadata only`));
      assert.doesNotMatch(ofFile.stderr, /folder/);
      const ofFolder = await gantry(['storage', 'revisions', folder.id], env());
      assert.match(ofFolder.stderr, new RegExp(`${folder.id} has no revisions \\(a folder keeps none\\)`));
    });
  });
});
