// `gantry doctor` tells the truth on a machine that lacks each thing in turn: the built command (dist/lib/cli/main.js,
// as npx runs it; `npm run build` first, as `pretest` does) in its own process, with a controlled environment — a PATH
// of links to everything but the missing tool, CHROME_PATH at a file that cannot run, a fake chromedriver of another
// major, SECRETS_ADDR at a started dev kv server and at a closed port. No rule of ../shared/spec/rules.md covers
// doctor; the design card's "a closed pipe ends quietly" is the last test.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startPageanalysisServer, type PageanalysisServer } from '../../devserver/pageanalysis/index.js';
import { startRegistryServer, type RegistryServer } from '../../devserver/registry/index.js';
import { startSecretsServer, type SecretsServer } from '../../devserver/secrets/index.js';
import type { DoctorCheck, DoctorReport } from '../../lib/doctor/index.js';
import { systemPackages } from '../../lib/system-packages.js';
import { buildFixture } from '../devserver/registry/fixture.js';
import { startHttpPeer, type HttpPeer } from '../peers/http.js';

const bin = fileURLToPath(new URL('../../dist/lib/cli/main.js', import.meta.url));
// Every program the package list names, as the set-up script checks for them.
const programs = systemPackages()
  .filter((p) => p.name !== 'chromium' && p.name !== 'chromedriver')
  .map((p) => p.command);
/** Root installs without sudo, as the set-up script does. */
const sudo = process.getuid?.() === 0 ? '' : 'sudo ';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `gantry doctor <args>` with only PATH, HOME and `env`: nothing configured unless the test says so. */
function doctor(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'doctor', ...args], { env: { HOME: process.env.HOME!, GANTRY_LOG: 'warn', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function row(run: Run, check: string): string {
  const line = run.stdout.split('\n').find((text) => text.startsWith(`${check} `));
  assert.ok(line, `a row for ${check} in:\n${run.stdout}`);
  return line;
}

/** A file of `text` with `mode`, in `folder`. */
async function writeScript(folder: string, name: string, text: string, mode: number): Promise<string> {
  const file = join(folder, name);
  await writeFile(file, text);
  await chmod(file, mode);
  return file;
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('gantry doctor (built, in its own process)', function () {
  this.timeout(60_000);
  let dir: string;
  /** A PATH folder holding links to every program doctor looks for on PATH. */
  let everything: string;
  /** The same without git. */
  let noGit: string;
  /** The same without openssl, which only the tests need. */
  let noOpenssl: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gantry-doctor-'));
    everything = join(dir, 'all');
    noGit = join(dir, 'no-git');
    noOpenssl = join(dir, 'no-openssl');
    const without = (missing: string) => programs.filter((name) => name !== missing);
    for (const [folder, names] of [
      [everything, programs],
      [noGit, without('git')],
      [noOpenssl, without('openssl')],
    ] as const) {
      await mkdir(folder);
      for (const name of names) {
        const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim();
        assert.ok(found, `${name} is installed here (npm run setup)`);
        await symlink(found, join(folder, name));
      }
    }
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('everything present and nothing configured: exit 0, each package found with its version, endpoints "not configured"', async () => {
    const run = await doctor([], { PATH: everything });
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.equal(run.stderr, '');
    assert.match(row(run, 'node'), new RegExp(`\\bok\\s+${process.versions.node.replace(/\./g, '\\.')}`));
    for (const pkg of systemPackages()) assert.match(row(run, pkg.name), /\bok\s+\d+\.\d+\S* \(\//, `${pkg.name} found, with version and path`);
    for (const endpoint of ['secrets service (SECRETS_ADDR)', 'module registry (GANTRY_REGISTRY_HOST)', 'page analysis API (PAGEANALYSIS_BASE_URL)'])
      assert.match(row(run, endpoint), /\bnot configured\b/);
    assert.match(run.stdout, /^everything Gantry needs is here$/m);
  });

  it('git not on PATH: git missing with its install command, the feature that needs it, npm run setup, exit 1', async () => {
    const run = await doctor([], { PATH: noGit });
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.match(row(run, 'git'), new RegExp(`\\bmissing\\s+no git on PATH\\s+${sudo}apt-get install -y git$`));
    assert.match(row(run, 'xz'), /\bok\b/);
    assert.match(run.stdout, /^git \(missing\): needed for git:: module sources$/m);
    assert.match(run.stdout, /^to set up what is missing: npm run setup$/m);
    assert.match(run.stderr, /^error: missing or failing: git$/m);
    assert.match(run.stderr, /^hint: run `npm run setup`, then `gantry doctor` again$/m);
  });

  it('openssl not on PATH: reported "missing (tests only)" with its install command, and no failure (exit 0)', async () => {
    const run = await doctor([], { PATH: noOpenssl });
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(row(run, 'openssl'), new RegExp(`\\bmissing \\(tests only\\)\\s+no openssl on PATH\\s+${sudo}apt-get install -y openssl$`));
    assert.match(run.stdout, /^everything Gantry needs is here$/m);
  });

  it('CHROME_PATH at a file that is not executable: Chromium missing, what is wrong, and how to fix it', async () => {
    const file = await writeScript(dir, 'chromium-not-executable', '#!/bin/sh\n', 0o644);
    const run = await doctor([], { PATH: everything, CHROME_PATH: file });
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.match(
      row(run, 'chromium'),
      new RegExp(
        `\\bmissing\\s+CHROME_PATH points at ${file}, which is not an executable file\\s+point CHROME_PATH at a working binary, or unset it and ${sudo}apt-get install -y chromium`,
      ),
    );
    assert.match(run.stdout, /^chromium \(missing\): needed for gates with the local engine/m);
  });

  it('CHROME_PATH at a program that answers --version but is no browser (/bin/sleep): an error naming what it said, exit 1', async () => {
    const run = await doctor([], { PATH: everything, CHROME_PATH: '/bin/sleep' });
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.match(
      row(run, 'chromium'),
      /\berror\s+\/bin\/sleep is not Chromium or Chrome: its --version said "sleep \(GNU coreutils\)[^"]*"\s+point CHROME_PATH at Chromium or Chrome, or unset it/,
    );
  });

  it('an endpoint given by a flag is named by that flag in the fix (--registry-host, not GANTRY_REGISTRY_HOST)', async () => {
    const run = await doctor(['--registry-host', 'localhost'], { PATH: everything });
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.match(row(run, 'module registry'), /check --registry-host and that the service runs/);
  });

  it('a chromedriver of another major than Chromium: mismatch, exit 1; the JSON says the same', async () => {
    const driver = await writeScript(dir, 'chromedriver-old', '#!/bin/sh\necho "ChromeDriver 1.2.3 (fake)"\n', 0o755);
    const run = await doctor([], { PATH: everything, CHROMEDRIVER_PATH: driver });
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.match(row(run, 'chromedriver'), /\bmismatch\s+1\.2\.3 \(.*\): major 1, Chromium is \d+/);
    assert.match(run.stdout, /^chromedriver \(mismatch\): needed for browser checks, which need a chromedriver of Chromium's major/m);
    const json = await doctor(['--json'], { PATH: everything, CHROMEDRIVER_PATH: driver });
    assert.equal(json.code, 1);
    const report = JSON.parse(json.stdout) as DoctorReport;
    assert.equal(report.ok, false);
    const check = report.checks.find((c) => c.check === 'chromedriver')!;
    assert.equal(check.status, 'mismatch');
    assert.equal(check.version, '1.2.3');
    assert.equal(check.path, driver);
  });

  it('--json: one object, ok and the checks (check, kind, status, detail; fix when failed), nothing else on stdout', async () => {
    const run = await doctor(['--json'], { PATH: noGit });
    assert.equal(run.code, 1);
    const report = JSON.parse(run.stdout) as DoctorReport;
    assert.deepEqual(Object.keys(report).sort(), ['checks', 'ok', 'setup']);
    assert.equal(report.ok, false);
    assert.equal(report.setup, 'npm run setup');
    assert.deepEqual(
      report.checks.map((c) => c.check),
      [
        'node',
        ...systemPackages().map((pkg) => pkg.name),
        'secrets service',
        'module registry',
        'page analysis API',
        'platform API',
        'authorization server',
        'storage API',
        'context server authorization',
      ],
    );
    for (const check of report.checks) {
      assert.equal(typeof check.detail, 'string');
      assert.ok(['node', 'package', 'endpoint'].includes(check.kind));
    }
    const git = report.checks.find((c) => c.check === 'git') as DoctorCheck;
    assert.deepEqual([git.status, git.fix], ['missing', `${sudo}apt-get install -y git`]);
    const secrets = report.checks.find((c) => c.check === 'secrets service')!;
    assert.deepEqual([secrets.status, secrets.setting], ['not configured', 'SECRETS_ADDR']);
  });

  describe('endpoints', () => {
    let kv: SecretsServer;
    let registry: RegistryServer;
    let registryFixture: { dir: string; remove(): Promise<void> };
    let pageanalysis: PageanalysisServer;

    before(async () => {
      kv = await startSecretsServer({});
      registryFixture = await buildFixture();
      registry = await startRegistryServer({ dir: registryFixture.dir });
      pageanalysis = await startPageanalysisServer({ apiKeys: ['a-key'], analyser: () => Promise.reject(new Error('no analysis in doctor')) });
    });
    after(async () => {
      await kv?.stop();
      await registry?.stop();
      await registryFixture?.remove();
      await pageanalysis?.stop();
    });

    it('the dev kv server, registry and page-analysis API started: each reachable, exit 0', async () => {
      const run = await doctor([], { PATH: everything, SECRETS_ADDR: kv.url, GANTRY_REGISTRY_HOST: registry.host, PAGEANALYSIS_BASE_URL: pageanalysis.url });
      assert.equal(run.code, 0, run.stdout + run.stderr);
      assert.match(row(run, 'secrets service'), new RegExp(`\\bok\\s+${kv.url} answers \\(version 1\\.0\\.0\\+gantry\\)`));
      assert.match(row(run, 'module registry'), new RegExp(`\\bok\\s+${registry.host.replace(/\./g, '\\.')}: modules.v1 at http://`));
      assert.match(row(run, 'page analysis API'), /\bok\s+.* answers \(40[013] without a page\)/);
      // --registry-host checks a host GANTRY_REGISTRY_HOST does not name.
      const flag = await doctor(['--registry-host', registry.host], { PATH: everything });
      assert.match(row(flag, 'module registry'), /\bok\b/);
    });

    it("GANTRY_AUTH_URL: the authorization server's metadata read without the client id or secret; refused when plain http to a remote host", async () => {
      const { startOAuthServer } = await import('../../devserver/oauth/index.js');
      const oauth = await startOAuthServer({ host: '127.0.0.1', port: 0, devicePath: '/oauth2/device' });
      try {
        const secret = 'canary-oauth-client-secret-doctor';
        const run = await doctor([], {
          PATH: everything,
          GANTRY_AUTH_URL: oauth.url,
          GANTRY_OAUTH_CLIENT_ID: 'some-client',
          GANTRY_OAUTH_CLIENT_SECRET: secret,
        });
        assert.equal(run.code, 0, run.stdout + run.stderr);
        assert.match(
          row(run, 'authorization server'),
          new RegExp(`\\bok\\s+${oauth.url}: device endpoint ${oauth.url}/oauth2/device \\(from openid-configuration\\)`),
        );
        assert.deepEqual(
          oauth.requestLog().map((entry) => entry.path),
          ['/.well-known/openid-configuration'],
          'only the metadata was asked for',
        );
        assert.ok(!(run.stdout + run.stderr).includes(secret));
      } finally {
        await oauth.stop();
      }
      const remote = await doctor([], { PATH: everything, GANTRY_AUTH_URL: 'http://auth.example.com' });
      assert.equal(remote.code, 1);
      assert.match(row(remote, 'authorization server'), /\berror\s+GANTRY_AUTH_URL must be https/);
    });

    it("GANTRY_MCP_AUTHORIZATION_SERVER: the issuer's RFC 8414 metadata with its issuer checked, as gantry mcp serve reads it; a mismatched issuer is an error", async () => {
      const { startOAuthServer } = await import('../../devserver/oauth/index.js');
      const oauth = await startOAuthServer({ host: '127.0.0.1', port: 0 });
      const liar = await startOAuthServer({ host: '127.0.0.1', port: 0, metadataOverrides: { issuer: 'https://elsewhere.example' } });
      try {
        const run = await doctor([], { PATH: everything, GANTRY_MCP_AUTHORIZATION_SERVER: oauth.url });
        assert.equal(run.code, 0, run.stdout + run.stderr);
        assert.match(
          row(run, 'context server authorization'),
          new RegExp(`\\bok\\s+${oauth.url}/?: issuer matches; tokens checked as JWTs by its JWKS, others by introspection`),
        );
        const mismatch = await doctor([], { PATH: everything, GANTRY_MCP_AUTHORIZATION_SERVER: liar.url });
        assert.equal(mismatch.code, 1);
        assert.match(row(mismatch, 'context server authorization'), /\berror\s+.*is for issuer "?https:\/\/elsewhere\.example"?, not/);
      } finally {
        await Promise.all([oauth.stop(), liar.stop()]);
      }
    });

    it("STORAGE_BASE_URL: about.get with STORAGE_TOKEN answers as its user; without a token the service's own 401 shows it is there; a wrong token is an error whose fix names the setting, the token never shown", async () => {
      const { startStorageServer } = await import('../../devserver/storage/index.js');
      const dir = await mkdtemp(join(tmpdir(), 'gantry-doctor-storage-'));
      const token = 'canary-storage-token-doctor-91';
      const storage = await startStorageServer({ host: '127.0.0.1', port: 0, dir, token });
      try {
        const good = await doctor([], { PATH: everything, STORAGE_BASE_URL: storage.url, STORAGE_TOKEN: token });
        assert.equal(good.code, 0, good.stdout + good.stderr);
        assert.match(row(good, 'storage API'), new RegExp(`\\bok\\s+${storage.url} answers as dev@gantry\\.test`));
        const home = await mkdtemp(join(tmpdir(), 'gantry-doctor-home-'));
        const anonymous = await doctor([], { PATH: everything, HOME: home, STORAGE_BASE_URL: `${storage.url}/storage/v2` });
        assert.equal(anonymous.code, 1, anonymous.stdout + anonymous.stderr);
        assert.match(
          row(anonymous, 'storage API'),
          /\berror\s+.* answers, but STORAGE_TOKEN is not set and profile default has no gantry auth login\s+set STORAGE_TOKEN, or run gantry auth login --scope storage\.file$/,
        );
        // A login recorded in the profile index (no token is read) is what the commands would use.
        await mkdir(join(home, '.config', 'gantry', 'auth'), { recursive: true });
        await writeFile(
          join(home, '.config', 'gantry', 'auth', 'profiles.json'),
          JSON.stringify({
            format: 'gantry-auth-profiles/1',
            profiles: [
              {
                authUrl: 'http://127.0.0.1:5762',
                clientId: 'c',
                profile: 'default',
                store: { kind: 'file', spec: 'file' },
                location: 'a file',
                account: { email: 'dev@gantry.test' },
                writtenAt: new Date().toISOString(),
              },
            ],
          }),
        );
        const withLogin = await doctor([], { PATH: everything, HOME: home, STORAGE_BASE_URL: storage.url });
        assert.match(
          row(withLogin, 'storage API'),
          /\bok\s+.* answers; STORAGE_TOKEN is not set, the commands use the gantry auth login of profile default \(dev@gantry\.test\)/,
          withLogin.stdout,
        );
        await rm(home, { recursive: true, force: true });
        const wrong = await doctor([], { PATH: everything, STORAGE_BASE_URL: storage.url, STORAGE_TOKEN: `${token}-wrong` });
        assert.equal(wrong.code, 1);
        assert.match(
          row(wrong, 'storage API'),
          /\berror\s+.* refuses STORAGE_TOKEN \(401 authError\)\s+set a valid STORAGE_TOKEN \(or unset it to use a gantry auth login\)$/,
        );
        for (const run of [good, anonymous, withLogin, wrong]) assert.ok(!(run.stdout + run.stderr).includes(token), 'the token is never shown');
      } finally {
        await storage.stop();
        await rm(dir, { recursive: true, force: true });
      }
      const remote = await doctor([], { PATH: everything, STORAGE_BASE_URL: 'http://storage.example.com' });
      assert.equal(remote.code, 1);
      assert.match(row(remote, 'storage API'), /\berror\s+the storage base URL must be https/);
    });

    it('SECRETS_ADDR at a closed port: unreachable, exit 1, the fix names SECRETS_ADDR', async () => {
      const port = await closedPort();
      const run = await doctor([], { PATH: everything, SECRETS_ADDR: `http://127.0.0.1:${port}` });
      assert.equal(run.code, 1, run.stdout + run.stderr);
      assert.match(
        row(run, 'secrets service'),
        new RegExp(`\\bunreachable\\s+http://127\\.0\\.0\\.1:${port}: .*ECONNREFUSED.*check SECRETS_ADDR and that the service runs$`),
      );
      assert.match(run.stdout, /^secrets service \(unreachable\): needed for gantry secrets and KvSecret resources$/m);
      assert.doesNotMatch(run.stdout, /to set up what is missing/, 'no package to install for an endpoint');
    });

    describe('credentials', () => {
      let peer: HttpPeer;
      before(async () => {
        peer = await startHttpPeer((request, response) => {
          const health = request.url.startsWith('/v1/sys/health');
          response.writeHead(health ? 200 : 400, { 'content-type': 'application/json' });
          response.end(JSON.stringify(health ? { initialized: true, sealed: false, version: 'peer' } : { error: { code: 400, message: 'url is required' } }));
        });
      });
      after(() => peer?.close());

      it('the probes send no token or key and print none: the kv health and the page-analysis API are asked without', async () => {
        const canaries = {
          SECRETS_TOKEN: 'canary-secrets-token-doctor',
          PAGEANALYSIS_API_KEY: 'canary-api-key-doctor',
          PAGEANALYSIS_TOKEN: 'canary-oauth-doctor',
        };
        const run = await doctor(['--verbose'], { PATH: everything, SECRETS_ADDR: peer.url, PAGEANALYSIS_BASE_URL: `${peer.url}/`, ...canaries });
        assert.equal(run.code, 0, run.stdout + run.stderr);
        assert.deepEqual(peer.requests.map((r) => `${r.method} ${r.url}`).sort(), ['GET /pageanalysis/v5/runPageanalysis', 'GET /v1/sys/health']);
        const seen = JSON.stringify(peer.requests) + run.stdout + run.stderr;
        for (const canary of Object.values(canaries)) assert.ok(!seen.includes(canary), `${canary} leaked`);
      });
    });
  });

  it("a reader that closes early (gantry doctor | head -1): no EPIPE crash, the command's own exit code", async () => {
    for (const [args, env, expected] of [
      [[], { PATH: everything }, 0],
      [['--json'], { PATH: noGit }, 1],
    ] as const) {
      const result = await new Promise<Run>((resolve, reject) => {
        const child = spawn(process.execPath, [bin, 'doctor', ...args], { env: { HOME: process.env.HOME!, ...env } });
        // The read end closes before doctor writes a byte (its checks take a moment), so every write meets EPIPE.
        child.stdout.destroy();
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stdout: '', stderr }));
      });
      assert.equal(result.code, expected, result.stderr);
      assert.doesNotMatch(result.stderr, /EPIPE|Unhandled|at /);
    }
  });

  it('the package list doctor checks is the one setup installs (scripts/system-packages.json next to package.json)', () => {
    const fromDist = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { systemPackages } from ${JSON.stringify(join(dirname(bin), '../system-packages.js'))}; console.log(systemPackages().map((p) => p.name).join(' '))`,
      ],
      { encoding: 'utf8' },
    );
    assert.equal(
      fromDist.stdout.trim(),
      systemPackages()
        .map((pkg) => pkg.name)
        .join(' '),
    );
  });
});
