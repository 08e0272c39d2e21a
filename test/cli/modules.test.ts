import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { RegistryServer } from '../../devserver/registry/index.js';
import { run } from '../../lib/cli/program.js';
import { startRegistry, writeModules } from '../registry/fixtures.js';
import { exited, spawnGantry } from './gantry-process.js';

/** Runs the command in this process with captured stdout/stderr (stderr is not a TTY: no progress bars). */
/** A lock as `pin` writes it (sorted, indented), so an edit is the only difference. */
function formatLock(lock: unknown): string {
  return `${JSON.stringify(lock, null, 2)}\n`;
}

async function gantry(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return gantryWith({ tty: false }, ...args);
}

async function gantryWith(options: { tty: boolean }, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const sink = (append: (text: string) => void) =>
    Object.assign(
      new Writable({
        write(chunk, _encoding, callback) {
          append(String(chunk));
          callback();
        },
      }),
      { isTTY: options.tty, columns: 100 },
    );
  const previousExitCode = process.exitCode;
  const code = await run(['node', 'gantry', ...args], {
    stdout: sink((t) => {
      stdout += t;
    }),
    stderr: sink((t) => {
      stderr += t;
    }),
  });
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
    assert.deepEqual(
      JSON.parse(list.stdout)
        .map((r: { name: string }) => r.name)
        .sort(),
      ['bucket', 'network'],
    );
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
    assert.deepEqual(
      JSON.parse(installed.stdout).map((r: { status: string }) => r.status),
      ['installed', 'installed'],
    );
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

  it('paths to write are checked first (class: a path that cannot be written hangs or fails late): --dir /proc/nope, a file, a lock folder exit 2', async () => {
    const project = await mkdtemp(join(dir, 'project-'));
    const file = join(project, 'gantry.modules.json');
    await writeFile(file, JSON.stringify({ bucket: { source: 'acme/bucket/aws' } }));
    assert.equal((await gantry('modules', 'pin', '--file', file)).code, 0);
    const started = Date.now();
    const proc = await gantry('modules', 'install', '--file', file, '--dir', '/proc/nope/modules');
    assert.equal(proc.code, 2, proc.stderr);
    assert.match(proc.stderr, /error: the install folder (?:\(--dir\) )?\/proc\/nope(?:\/modules)? (cannot be created|is not writable)/);
    assert.ok(Date.now() - started < 10_000, 'no endless mkdir loop');
    await writeFile(join(project, 'plain-file'), 'x');
    const onFile = await gantry('modules', 'install', '--file', file, '--dir', join(project, 'plain-file', 'modules'));
    assert.equal(onFile.code, 2);
    assert.match(onFile.stderr, /plain-file is a file, not a folder/);
    const lockDir = await mkdtemp(join(dir, 'lockdir-'));
    await writeFile(join(lockDir, 'gantry.modules.json'), JSON.stringify({ bucket: { source: 'acme/bucket/aws' } }));
    await mkdir(join(lockDir, 'gantry.lock.json'));
    const lockIsFolder = await gantry('modules', 'pin', '--file', join(lockDir, 'gantry.modules.json'));
    assert.equal(lockIsFolder.code, 2);
    assert.match(lockIsFolder.stderr, /gantry\.lock\.json (is a folder, not a file|cannot be read)/);
  });

  it('folders Gantry did not write are never replaced silently (class: silent data loss); pin names the module that failed', async () => {
    const project = await mkdtemp(join(dir, 'project-'));
    const file = join(project, 'gantry.modules.json');
    const mine = join(project, 'mine');
    await mkdir(join(mine, 'network'), { recursive: true });
    await writeFile(join(mine, 'network', 'notes.txt'), 'my notes');
    await writeFile(file, JSON.stringify({ network: { source: 'acme/network/aws', version: '~> 1.0' } }));
    assert.equal((await gantry('modules', 'pin', '--file', file)).code, 0);
    const refused = await gantry('modules', 'install', '--file', file, '--dir', mine);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /mine\/network exists and was not installed by Gantry/);
    assert.match(
      refused.stderr,
      /hint: move the folder away, or install elsewhere with --dir; `gantry modules install --file \S+ --dir \S+ --force` replaces it/,
    );
    assert.equal(await readFile(join(mine, 'network', 'notes.txt'), 'utf8'), 'my notes');
    assert.equal((await gantry('modules', 'install', '--file', file, '--dir', mine, '--force')).code, 0);

    await writeFile(file, JSON.stringify({ network: { source: 'acme/network/aws', version: '~> 1.0' }, missing: { source: 'acme/nothere/aws' } }));
    const pinned = await gantry('modules', 'pin', '--file', file);
    assert.equal(pinned.code, 1, pinned.stderr);
    assert.match(pinned.stderr, /error: missing \(\S+acme\/nothere\/aws\): /, 'the failing module is named');
    await writeFile(file, JSON.stringify({ network: { source: 'acme/network/aws', version: '~> 1.0' } }));
    const unchanged = await gantry('modules', 'pin', '--file', file);
    assert.match(unchanged.stdout, /^unchanged \S+gantry\.lock\.json$/m);
  });

  it('a lie in the lock is exit 1 (class: the lock is trusted blindly); {} and malformed entries exit 2 naming file and entry', async () => {
    const project = await mkdtemp(join(dir, 'project-'));
    const file = join(project, 'gantry.modules.json');
    const modulesDir = join(project, 'mods');
    await writeFile(file, JSON.stringify({ net: { source: 'acme/network/aws', version: '~> 1.0' } }));
    assert.equal((await gantry('modules', 'pin', '--file', file)).code, 0);
    assert.equal((await gantry('modules', 'install', '--file', file, '--dir', modulesDir)).code, 0);
    const lockPath = join(project, 'gantry.lock.json');
    const lock = JSON.parse(await readFile(lockPath, 'utf8'));
    const key = Object.keys(lock.modules)[0] as string;
    for (const lie of ['9.9.9', '1.0.0']) {
      await writeFile(lockPath, JSON.stringify({ ...lock, modules: { [key]: { ...lock.modules[key], version: lie } } }));
      for (const verb of ['install', 'verify']) {
        const result = await gantry('modules', verb, '--file', file, '--dir', modulesDir);
        assert.equal(result.code, 1, `${verb} with version ${lie}: ${result.stderr}`);
        assert.match(result.stderr, /edited by hand|not allowed by its constraint|installed as 1\.1\.0/);
        assert.match(result.stderr, /gantry modules pin --file \S+ --upgrade net/);
      }
    }
    await writeFile(lockPath, '{}');
    const empty = await gantry('modules', 'install', '--file', file, '--dir', modulesDir);
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /gantry\.lock\.json has no "version" field/);
    assert.doesNotMatch(empty.stderr, /undefined/);
    await writeFile(
      lockPath,
      JSON.stringify({ version: 1, modules: { [key]: { ...lock.modules[key], version: 'latest' }, [key.replace('/acme/', '/ACME/')]: lock.modules[key] } }),
    );
    const twice = await gantry('modules', 'install', '--file', file, '--dir', modulesDir);
    assert.equal(twice.code, 2);
    assert.match(twice.stderr, /(not a version|are the same module)/);
    await writeFile(lockPath, JSON.stringify({ version: 1, modules: { [key]: lock.modules[key], [key.replace('/acme/', '/ACME/')]: lock.modules[key] } }));
    const cased = await gantry('modules', 'install', '--file', file, '--dir', modulesDir);
    assert.equal(cased.code, 2);
    assert.match(cased.stderr, /are the same module .*compared without regard to case/);
    await writeFile(file, JSON.stringify({ a: { source: 'acme/network/aws', version: '~> 1.0' }, b: { source: 'ACME/network/aws', version: '1.0.0' } }));
    const manifest = await gantry('modules', 'pin', '--file', file);
    assert.equal(manifest.code, 2);
    assert.match(manifest.stderr, /"a" \(acme\/network\/aws\) and "b" \(ACME\/network\/aws\) are the same module/);
  });

  it('a kept pin is checked too (class: pin trusts a lie that install and verify refuse), by the install record or the registry', async () => {
    const project = await mkdtemp(join(dir, 'project-'));
    const file = join(project, 'gantry.modules.json');
    const modulesDir = join(project, 'mods');
    await writeFile(file, JSON.stringify({ net: { source: 'acme/network/aws', version: '~> 1.0' } }));
    assert.equal((await gantry('modules', 'pin', '--file', file)).code, 0);
    assert.equal((await gantry('modules', 'install', '--file', file, '--dir', modulesDir)).code, 0);
    const lockPath = join(project, 'gantry.lock.json');
    const text = await readFile(lockPath, 'utf8');
    const lock = JSON.parse(text);
    const key = Object.keys(lock.modules)[0] as string;
    const edits = [{ version: '1.0.0' }, { hash: 'h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=' }];
    for (const edit of edits) {
      const edited = formatLock({ ...lock, modules: { [key]: { ...lock.modules[key], ...edit } } });
      // With the install record (no network), and without one (the registry's archive of the pinned version).
      for (const where of [
        ['--dir', modulesDir],
        ['--dir', join(project, 'elsewhere')],
      ]) {
        await writeFile(lockPath, edited);
        const pinned = await gantry('modules', 'pin', '--file', file, ...where);
        assert.equal(pinned.code, 1, `pin with ${JSON.stringify(edit)} ${where.join(' ')}: ${pinned.stderr}`);
        assert.match(pinned.stderr, /edited by hand/);
        assert.match(
          pinned.stderr,
          /hint: restore gantry\.lock\.json from version control, or re-resolve the module with `gantry modules pin --file \S+ --upgrade net`/,
        );
        assert.equal(await readFile(lockPath, 'utf8'), edited, 'the lock is left as it is');
      }
    }
    await writeFile(lockPath, text);
    const unchanged = await gantry('modules', 'pin', '--file', file, '--dir', join(project, 'elsewhere'));
    assert.equal(unchanged.code, 0, unchanged.stderr);
    assert.match(unchanged.stdout, /^unchanged /m, 'a true pin checked against the registry is kept');
  });

  it("every hint leads to a command that fixes the problem (class: hints that cannot work): verify after the lock's hash was edited", async () => {
    const project = await mkdtemp(join(dir, 'project-'));
    const file = join(project, 'gantry.modules.json');
    const modulesDir = join(project, 'mods');
    await writeFile(file, JSON.stringify({ net: { source: 'acme/network/aws', version: '~> 1.0' } }));
    assert.equal((await gantry('modules', 'pin', '--file', file)).code, 0);
    assert.equal((await gantry('modules', 'install', '--file', file, '--dir', modulesDir)).code, 0);
    const lockPath = join(project, 'gantry.lock.json');
    const lock = JSON.parse(await readFile(lockPath, 'utf8'));
    const key = Object.keys(lock.modules)[0] as string;
    await writeFile(lockPath, formatLock({ ...lock, modules: { [key]: { ...lock.modules[key], hash: 'h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=' } } }));
    const verify = await gantry('modules', 'verify', '--file', file, '--dir', modulesDir);
    assert.equal(verify.code, 1);
    assert.match(verify.stdout, /net\s+lock hash for 1\.1\.0 is not the one installed/);
    assert.doesNotMatch(verify.stderr, /--force/, 'not the install --force that would fail on the hash');
    const hint = /^hint: (.*)$/m.exec(verify.stderr)?.[1] ?? '';
    assert.match(hint, /restore gantry\.lock\.json from version control, or `gantry modules pin --file \S+ --upgrade net`/);
    // Follow the hint: every command it names, in order, then verify passes.
    for (const command of [...hint.matchAll(/`gantry (modules [^`]+)`/g)].map((m) => m[1]!.split(' '))) {
      const ran = await gantry(...command);
      assert.equal(ran.code, 0, `${command.join(' ')}: ${ran.stderr}`);
    }
    assert.equal((await gantry('modules', 'verify', '--file', file, '--dir', modulesDir)).code, 0);
  });

  it('pin and install report every failing module, each line naming module and address (class: only the first failure shown)', async () => {
    const project = await mkdtemp(join(dir, 'project-'));
    const file = join(project, 'gantry.modules.json');
    await writeFile(
      file,
      JSON.stringify({
        x: { source: 'acme/network/aws', version: '~> 1.0' },
        y: { source: 'acme/nothere/aws' },
        z: { source: 'acme/bucket/aws', version: '~> 9.0' },
      }),
    );
    const pinned = await gantry('modules', 'pin', '--file', file);
    assert.equal(pinned.code, 1, pinned.stderr);
    assert.match(pinned.stderr, /^error: 2 modules failed to pin:$/m);
    assert.match(pinned.stderr, /^ {2}y \(\S+acme\/nothere\/aws\): /m);
    assert.match(pinned.stderr, /^ {2}z \(\S+acme\/bucket\/aws\): .*9\.0/m);
    await assert.rejects(readFile(join(project, 'gantry.lock.json')), 'no lock is written');

    await writeFile(file, JSON.stringify({ x: { source: 'acme/network/aws', version: '~> 1.0' } }));
    assert.equal((await gantry('modules', 'pin', '--file', file)).code, 0);
    await writeFile(file, JSON.stringify({ x: { source: 'acme/network/aws', version: '~> 1.1' }, w: { source: 'acme/bucket/aws' } }));
    const installed = await gantry('modules', 'install', '--file', file, '--dir', join(project, 'mods'));
    assert.equal(installed.code, 2, installed.stderr);
    assert.match(installed.stderr, /^error: 2 modules failed to install:$/m);
    assert.match(installed.stderr, /^ {2}x \(\S+acme\/network\/aws\): the constraint of "x" changed/m);
    assert.match(installed.stderr, /^ {2}"w" \(\S+acme\/bucket\/aws\) is not in the lock file/m);
    assert.match(installed.stderr, /^hint: run `gantry modules pin --file \S+` to re-resolve it/m);
    assert.match(installed.stderr, /^hint: run `gantry modules pin --file \S+` to add it/m);
  });

  it('an interrupted install leaves no working folder behind, and the next run removes orphans (class: leftovers of Ctrl-C)', async () => {
    const project = await mkdtemp(join(dir, 'project-'));
    const file = join(project, 'gantry.modules.json');
    const modulesDir = join(project, 'mods');
    await writeFile(file, JSON.stringify({ net: { source: 'acme/network/aws', version: '~> 1.0' } }));
    assert.equal((await gantry('modules', 'pin', '--file', file)).code, 0);
    await mkdir(join(modulesDir, '.net.tmp-999999-0123456789ab', 'tree'), { recursive: true });
    await mkdir(join(modulesDir, '.net.old-999998-0123456789ab'), { recursive: true });
    await mkdir(join(modulesDir, '.user-folder.tmp-keep'), { recursive: true });
    await mkdir(join(modulesDir, `.net.tmp-${process.pid}-aaaaaaaaaaaa`), { recursive: true });
    assert.equal((await gantry('modules', 'install', '--file', file, '--dir', modulesDir)).code, 0);
    assert.deepEqual(
      (await readdir(modulesDir)).sort(),
      ['.gantry-installed.json', `.net.tmp-${process.pid}-aaaaaaaaaaaa`, '.user-folder.tmp-keep', 'net'],
      "orphans of dead processes go, a live process's and others' stay",
    );

    // A real Ctrl-C: a process stopped by SIGINT while its download is held up.
    server.setFaults([{ kind: 'latency', ms: 4000, path: '/_gantry/archives/**' }]);
    await rm(join(modulesDir, 'net'), { recursive: true });
    const child = spawnGantry(['modules', 'install', '--file', file, '--dir', modulesDir], {
      GANTRY_REGISTRY_HOST: server.host,
      GANTRY_CACHE_DIR: join(dir, 'cache'),
    });
    for (let i = 0; i < 100 && !(await readdir(modulesDir)).some((n) => n.startsWith('.net.tmp-') && !n.includes(String(process.pid))); i += 1)
      await new Promise((r) => setTimeout(r, 100));
    assert.ok(
      (await readdir(modulesDir)).some((n) => n.startsWith('.net.tmp-') && !n.includes(String(process.pid))),
      'the install started',
    );
    const ended = exited(child);
    child.kill('SIGINT');
    await ended;
    assert.deepEqual(
      (await readdir(modulesDir)).filter((n) => n.startsWith('.net.') && !n.includes(String(process.pid))),
      [],
      'nothing left behind',
    );
  });

  it('definite answers exit 1, bad input 2 before sending (class: exit codes that lie)', async () => {
    const notFound = await gantry('modules', 'versions', 'acme/nothere/aws');
    assert.equal(notFound.code, 1, notFound.stderr);
    const noVersion = await gantry('modules', 'info', 'acme/network/aws@9.9.9');
    assert.equal(noVersion.code, 1, noVersion.stderr);
    server.clearRequests();
    for (const args of [
      ['resolve', 'acme/network/aws', '--version', '~> one'],
      ['versions', 'acme//aws'],
      ['info', 'acme/network/aws@'],
      ['search', ' '],
    ]) {
      const result = await gantry('modules', ...args);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
    }
    assert.deepEqual(
      server.requests().filter((r) => !r.path.startsWith('/.well-known')),
      [],
      'nothing was sent for bad input',
    );
  });
});
