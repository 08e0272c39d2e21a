// Consumer mode: gantry is built and packed once per test run, and every stack gets a fresh project
// in the temporary folder with the tarball's content installed as node_modules/gantry — a copy, as
// npm would install it, because the closure serializer only `require`s modules whose real path is
// inside node_modules (a symlinked package is serialized by value). gantry's own dependencies are
// the repository's installed ones, linked, so no registry is needed and it stays fast.
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const fixturesDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');

export type ConsumerKind = 'cjs' | 'esm';

/** Folders removed when the test process exits (mocha runs with --exit, so after hooks may not run). */
const temporary = new Set<string>();
process.once('exit', () => {
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

export async function makeTempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  temporary.add(dir);
  return dir;
}

export async function removeTempDir(dir: string): Promise<void> {
  temporary.delete(dir);
  await rm(dir, { recursive: true, force: true });
}

let packed: Promise<string> | undefined;

/**
 * Builds (unless `npm test`'s pretest just did) and packs gantry, once per process: every consumer
 * of the run installs the same tarball.
 */
export function packOnce(): Promise<string> {
  packed ??= (async () => {
    if (process.env.npm_lifecycle_event !== 'test') {
      await run('npm', ['run', 'build'], { cwd: repoRoot, maxBuffer: 16 * 1024 * 1024 }).catch((error: { stdout?: string; stderr?: string }) => {
        throw new Error(`npm run build failed:\n${error.stdout ?? ''}${error.stderr ?? ''}`);
      });
    }
    const destination = await makeTempDir('gantry-pack-');
    const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', destination], {
      cwd: repoRoot,
      maxBuffer: 16 * 1024 * 1024,
    });
    const [{ filename }] = JSON.parse(stdout) as Array<{ filename: string }>;
    return path.join(destination, filename!);
  })();
  return packed;
}

/** Creates a consumer project of the given module kind with gantry and the fixture packages installed. */
export async function createConsumer(kind: ConsumerKind, project: string): Promise<string> {
  const tarball = await packOnce();
  const dir = await makeTempDir(`gantry-consumer-${kind}-`);
  const modules = path.join(dir, 'node_modules');
  await mkdir(path.join(modules, 'gantry'), { recursive: true });

  const manifest = {
    name: `gantry-consumer-${kind}`,
    version: '0.0.0',
    private: true,
    ...(kind === 'esm' ? { type: 'module' } : {}),
    main: 'index.js',
    dependencies: { gantry: `file:${tarball}`, '@pulumi/pulumi': '*' },
  };
  await writeFile(path.join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  await writeFile(path.join(dir, 'Pulumi.yaml'), `name: ${project}\nruntime: nodejs\n`);

  // The system's tar, not node-tar: extracting the ~1,200 files in JS cost the test process 1.2–1.7 s of CPU per
  // consumer (the files written are the same; docs/testing.md, "CPU, file by file").
  await run('tar', ['-xzf', tarball, '-C', path.join(modules, 'gantry'), '--strip-components=1', '--no-same-owner']);
  // Every folder of test/harness/fixtures/ is a test-only package, installed (copied) next to gantry so the plugin
  // resolves its lazy imports from node_modules exactly as it resolves gantry's.
  const fixtures = await readdir(fixturesDir);
  for (const name of fixtures) {
    await cp(path.join(fixturesDir, name), path.join(modules, name), { recursive: true });
  }
  for (const entry of await readdir(path.join(repoRoot, 'node_modules'))) {
    if (entry.startsWith('.') || entry === 'gantry' || fixtures.includes(entry)) continue;
    await symlink(path.join(repoRoot, 'node_modules', entry), path.join(modules, entry), 'dir');
  }
  await mkdir(path.join(dir, '.harness'));
  await cp(path.join(path.dirname(fileURLToPath(import.meta.url)), 'program-host.mjs'), path.join(dir, '.harness', 'program-host.mjs'));
  return dir;
}
