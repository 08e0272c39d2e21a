import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { RegistryServer } from '../../lib/devserver/registry/index.js';
import { run } from '../../lib/cli/program.js';
import { startRegistry, writeModules } from '../registry/fixtures.js';

/** Runs the command in this process with captured stdout/stderr (stderr is not a TTY: no progress bars). */
async function gantry(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return gantryWith({ tty: false }, ...args);
}

async function gantryWith(options: { tty: boolean }, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const sink = (append: (text: string) => void) => Object.assign(new Writable({ write(chunk, _encoding, callback) { append(String(chunk)); callback(); } }), { isTTY: options.tty, columns: 100 });
  const previousExitCode = process.exitCode;
  const code = await run(['node', 'gantry', ...args], { stdout: sink((t) => { stdout += t; }), stderr: sink((t) => { stderr += t; }) });
  process.exitCode = previousExitCode;
  return { code, stdout, stderr };
}

describe('gantry modules (the command against the embedded registry)', function () {
  this.timeout(60_000);
  let dir: string;
  let server: RegistryServer;
  const saved: Record<string, string | undefined> = {};

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gantry-cli-modules-'));
    await writeModules(join(dir, 'registry'), [
      { namespace: 'acme', name: 'network', provider: 'aws', versions: ['1.0.0', '1.1.0', '2.0.0-beta.1'], verified: true, description: 'VPC and subnets' },
      { namespace: 'acme', name: 'bucket', provider: 'aws', versions: ['0.1.0', '0.2.0'], description: 'A bucket' },
    ]);
    server = await startRegistry(join(dir, 'registry'));
    for (const name of ['GANTRY_REGISTRY_HOST', 'GANTRY_CACHE_DIR', 'GANTRY_DISCOVERY_TTL']) saved[name] = process.env[name];
    process.env.GANTRY_REGISTRY_HOST = server.host;
    process.env.GANTRY_CACHE_DIR = join(dir, 'cache');
  });
  after(async () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => server.setFaults([]));

  it('resolve prints the newest allowed version and its location; --json for machines', async () => {
    const table = await gantry('modules', 'resolve', 'acme/network/aws', '--version', '~> 1.0');
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^SOURCE\s+VERSION\s+LOCATION/m);
    assert.match(table.stdout, /acme\/network\/aws\s+1\.1\.0\s+http:\/\/127\.0\.0\.1/);
    const json = await gantry('modules', 'resolve', 'acme/network/aws', '--json');
    assert.equal(JSON.parse(json.stdout).version, '1.1.0');
  });

  it('versions lists newest first; info, list, search and downloads print tables and JSON', async () => {
    const versions = await gantry('modules', 'versions', 'acme/network/aws', '--json');
    assert.deepEqual(JSON.parse(versions.stdout), [
      { version: '2.0.0-beta.1', kind: 'pre-release' },
      { version: '1.1.0', kind: 'release' },
      { version: '1.0.0', kind: 'release' },
    ]);
    const info = await gantry('modules', 'info', 'acme/network/aws@1.0.0');
    assert.equal(info.code, 0, info.stderr);
    assert.match(info.stdout, /id\s+acme\/network\/aws\/1\.0\.0/);
    const list = await gantry('modules', 'list', 'acme', '--json');
    assert.deepEqual(JSON.parse(list.stdout).map((r: { name: string }) => r.name).sort(), ['bucket', 'network']);
    const verified = await gantry('modules', 'list', '--verified');
    assert.match(verified.stdout, /acme\/network\/aws/);
    assert.doesNotMatch(verified.stdout, /acme\/bucket\/aws/);
    const search = await gantry('modules', 'search', 'bucket');
    assert.match(search.stdout, /acme\/bucket\/aws\s+0\.2\.0/);
    const downloads = await gantry('modules', 'downloads', 'acme/bucket/aws', '--json');
    assert.equal(JSON.parse(downloads.stdout).data.type, 'module-downloads-summary');
  });

  it('pin writes gantry.lock.json, install installs, verify passes, then fails (exit 1) after tampering', async () => {
    const project = await mkdtemp(join(dir, 'project-'));
    const file = join(project, 'gantry.modules.json');
    const modulesDir = join(project, '.gantry', 'modules');
    await writeFile(file, JSON.stringify({ net: { source: 'acme/network/aws', version: '~> 1.0' }, bucket: { source: 'acme/bucket/aws' } }));
    const pinned = await gantry('modules', 'pin', '--file', file);
    assert.equal(pinned.code, 0, pinned.stderr);
    assert.match(pinned.stdout, /net\s+\S+acme\/network\/aws\s+~> 1\.0\s+1\.1\.0\s+new/);
    const lock = JSON.parse(await readFile(join(project, 'gantry.lock.json'), 'utf8'));
    assert.equal(lock.modules[`${server.host}/acme/bucket/aws`].version, '0.2.0');

    const installed = await gantry('modules', 'install', '--file', file, '--dir', modulesDir, '--json');
    assert.equal(installed.code, 0, installed.stderr);
    assert.deepEqual(JSON.parse(installed.stdout).map((r: { status: string }) => r.status), ['installed', 'installed']);
    assert.equal((await gantry('modules', 'verify', '--file', file, '--dir', modulesDir)).code, 0);

    await writeFile(join(modulesDir, 'net', 'main.tf'), 'tampered');
    const verify = await gantry('modules', 'verify', '--file', file, '--dir', modulesDir);
    assert.equal(verify.code, 1);
    assert.match(verify.stdout, /net\s+content differs from the lock/);
    assert.match(verify.stderr, /error: 1 module failed verification: net/);
    assert.match(verify.stderr, /hint: `gantry modules install --file \S+ --dir \S+ --force` puts the pinned content of net back/);
    const refused = await gantry('modules', 'install', '--file', file, '--dir', modulesDir);
    assert.equal(refused.code, 1, 'local changes are never replaced silently');
    assert.match(refused.stderr, /"net" has local changes/);
    assert.match(refused.stderr, /hint: .*--force` puts the pinned content back/);
    assert.equal(await readFile(join(modulesDir, 'net', 'main.tf'), 'utf8'), 'tampered');
    assert.equal((await gantry('modules', 'install', '--file', file, '--dir', modulesDir, '--force')).code, 0);
    assert.equal((await gantry('modules', 'verify', '--file', file, '--dir', modulesDir)).code, 0);

    lock.modules[`${server.host}/acme/bucket/aws`].hash = 'h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';
    await writeFile(join(project, 'gantry.lock.json'), JSON.stringify(lock));
    await rm(join(modulesDir, 'bucket', 'main.tf'));
    const mismatch = await gantry('modules', 'install', '--file', file, '--dir', modulesDir, '--force');
    assert.equal(mismatch.code, 1, mismatch.stderr);
    assert.match(mismatch.stderr, /bucket .*lock file pins h1:AAAA/);
    assert.deepEqual(await readdir(join(modulesDir, 'bucket')), [], 'the previous (edited) install is untouched');
  });

  it('progress bars go to stderr on a terminal only; stdout keeps just the table', async () => {
    const project = await mkdtemp(join(dir, 'project-'));
    const file = join(project, 'gantry.modules.json');
    await writeFile(file, JSON.stringify({ net: { source: 'acme/network/aws' }, bucket: { source: 'acme/bucket/aws' } }));
    const onTerminal = await gantryWith({ tty: true }, 'modules', 'pin', '--file', file);
    assert.equal(onTerminal.code, 0, onTerminal.stderr);
    assert.ok(onTerminal.stderr.includes('\r\u001b[2Kpinning ['), 'redraws the line in place');
    assert.match(onTerminal.stderr, /pinning \[#{24}\] 100%/);
    assert.doesNotMatch(onTerminal.stdout, /\r|pinning/);
    const piped = await gantry('modules', 'pin', '--file', file, '--upgrade');
    assert.equal(piped.stderr, '');
  });

  it('a truncated lock file exits 2 with a clear error and is left as it was', async () => {
    const project = await mkdtemp(join(dir, 'project-'));
    const file = join(project, 'gantry.modules.json');
    await writeFile(file, JSON.stringify({ bucket: { source: 'acme/bucket/aws' } }));
    await writeFile(join(project, 'gantry.lock.json'), '{"version": 1, "modules": {"x": {"constr');
    const result = await gantry('modules', 'pin', '--file', file);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /gantry\.lock\.json is not valid JSON .*truncated/);
    assert.equal(await readFile(join(project, 'gantry.lock.json'), 'utf8'), '{"version": 1, "modules": {"x": {"constr');
  });

  it('malformed addresses exit 2 naming the wrong part; a host without a registry exits 2', async () => {
    const bad = await gantry('modules', 'resolve', 'acme/network/AWS');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /error: the provider "AWS" of "acme\/network\/AWS" is invalid/);
    server.setFaults([{ kind: 'respond', path: '/.well-known/terraform.json', status: 404, body: '' }]);
    const none = await gantry('modules', 'versions', 'acme/network/aws', '--discovery-ttl', '0');
    assert.equal(none.code, 2);
    assert.match(none.stderr, /offers no module registry/);
    const constraint = await gantry('modules', 'resolve', 'acme/network/aws', '--version', '~> 9.0');
    assert.equal(constraint.code, 1);
    assert.match(constraint.stderr, /newest available is 1\.1\.0/);
  });
});
