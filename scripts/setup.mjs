#!/usr/bin/env node
// Installs what Gantry needs on this machine: the system packages of scripts/system-packages.json (through apt-get on
// Debian and Ubuntu, as root or with sudo), then the npm packages (npm ci, which also builds dist/). Runs before
// node_modules exists, so it uses nothing but Node itself. Running it again is quick and changes nothing.
//
//   node scripts/setup.mjs            install what it can, say what is left and which features need it (exit 0)
//   node scripts/setup.mjs --strict   the same, but exit 1 when something is still missing (CI)
//   node scripts/setup.mjs --no-npm   system packages only
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, constants, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const args = new Set(process.argv.slice(2));
const unknown = [...args].filter((arg) => !['--strict', '--no-npm', '--help', '-h'].includes(arg));
if (args.has('--help') || args.has('-h') || unknown.length > 0) {
  const out = unknown.length > 0 ? process.stderr : process.stdout;
  if (unknown.length > 0) out.write(`setup: unknown option ${unknown.join(' ')}\n`);
  out.write('usage: node scripts/setup.mjs [--strict] [--no-npm]\n');
  process.exit(unknown.length > 0 ? 2 : 0);
}

const { packages } = JSON.parse(readFileSync(join(root, 'scripts/system-packages.json'), 'utf8'));
const say = (line) => process.stdout.write(`setup: ${line}\n`);

function onPath(command) {
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return join(dir, command);
    } catch {
      // not in this folder
    }
  }
  return undefined;
}

const missingNow = () => packages.filter((pkg) => !onPath(pkg.command));

function run(command, commandArgs, env = process.env) {
  say(`running: ${[command, ...commandArgs].join(' ')}`);
  return spawnSync(command, commandArgs, { stdio: 'inherit', env }).status === 0;
}

/** How to become root for apt-get without ever waiting on a password nobody will type. */
function privilege() {
  if (process.getuid?.() === 0) return { prefix: [] };
  if (!onPath('sudo')) return { reason: 'not root and sudo is not installed' };
  if (spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0) return { prefix: ['sudo', '-n'] };
  // A person at a terminal can answer sudo's prompt; CI and pipes cannot, so they are told what to run instead.
  if (process.stdin.isTTY && !process.env.CI) return { prefix: ['sudo'] };
  return { reason: 'not root, and sudo needs a password (no terminal to ask on)' };
}

function installSystemPackages(missing) {
  const isDebian = process.platform === 'linux' && onPath('apt-get') && existsSync('/etc/debian_version');
  if (!isDebian) return process.platform === 'darwin' ? 'this is macOS (use Homebrew)' : 'this is not a Debian-based system (no apt-get)';
  const how = privilege();
  if (!how.prefix) return how.reason;
  const names = missing.map((pkg) => pkg.debian);
  const [sudo, ...sudoArgs] = how.prefix;
  const apt = (aptArgs) =>
    sudo
      ? run(sudo, [...sudoArgs, 'env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', ...aptArgs])
      : run('apt-get', aptArgs, { ...process.env, DEBIAN_FRONTEND: 'noninteractive' });
  if (!apt(['update', '-qq'])) return 'apt-get update failed';
  // Dpkg::Use-Pty=0: no "Reading database ... 5%" progress, which fills a CI log with one unreadable line.
  if (!apt(['install', '-y', '-qq', '--no-install-recommends', '-o', 'Dpkg::Use-Pty=0', ...names])) return 'apt-get install failed';
  return undefined;
}

function instructions(missing) {
  const lines = ['still missing — install these by hand:'];
  for (const pkg of missing) lines.push(`  ${pkg.name.padEnd(13)} needed for ${pkg.features}`);
  lines.push(`  Debian/Ubuntu: ${process.getuid?.() === 0 ? '' : 'sudo '}apt-get install -y ${missing.map((pkg) => pkg.debian).join(' ')}`);
  const formulae = missing.filter((pkg) => !pkg.brew.startsWith('--cask')).map((pkg) => pkg.brew);
  const casks = missing.filter((pkg) => pkg.brew.startsWith('--cask')).map((pkg) => pkg.brew.replace('--cask ', ''));
  if (formulae.length > 0) lines.push(`  macOS:         brew install ${formulae.join(' ')}`);
  if (casks.length > 0) lines.push(`  macOS:         brew install --cask ${casks.join(' ')}`);
  lines.push('  (CHROME_PATH and CHROMEDRIVER_PATH point Gantry at a browser and driver elsewhere; `npx gantry doctor` checks again)');
  return lines;
}

let missing = missingNow();
if (missing.length === 0) {
  say('system packages: all present');
} else {
  say(`system packages missing: ${missing.map((pkg) => pkg.name).join(', ')}`);
  const reason = installSystemPackages(missing);
  if (reason) say(`cannot install them here: ${reason}`);
  missing = missingNow();
  if (missing.length === 0) say('system packages: all installed');
  else for (const line of instructions(missing)) say(line);
}

if (!args.has('--no-npm')) {
  // npm ci only when the lock file changed since the last install here: a second run is a no-op.
  const stampPath = join(root, 'node_modules/.gantry-setup');
  const stamp = createHash('sha256')
    .update(readFileSync(join(root, 'package-lock.json')))
    .update(readFileSync(join(root, 'package.json')))
    .digest('hex');
  const current = existsSync(stampPath) ? readFileSync(stampPath, 'utf8').trim() : '';
  if (current === stamp && existsSync(join(root, 'dist/lib/cli/main.js'))) {
    say('npm packages: up to date');
  } else {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    if (!run(npm, ['ci', '--no-audit', '--no-fund'])) {
      say('npm ci failed (see above)');
      process.exit(1);
    }
    writeFileSync(stampPath, `${stamp}\n`);
    say('npm packages: installed, dist/ built');
  }
}

if (!args.has('--no-npm')) {
  // After npm: a test runtime is never what makes the project's own install fail, only a missing feature.
  const { installNodeRuntimes } = await import('./node-runtimes.mjs');
  for (const line of installNodeRuntimes()) say(line);
}

if (missing.length > 0 && args.has('--strict')) process.exit(1);
