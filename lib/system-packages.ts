/**
 * What Gantry needs beyond npm: `scripts/system-packages.json`, the one list that `npm run setup` (scripts/setup.mjs)
 * installs and `gantry doctor` checks. The file ships with the package (package.json `files`), and is found next to
 * package.json from lib/ or dist/lib/ alike (`packageRoot`). From it come the install commands that every "not found"
 * error prints, so a hint never names a package the list does not.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from './paths.js';

export interface SystemPackage {
  /** What doctor calls it: chromium, chromedriver, git, xz, bzip2, openssl. */
  name: string;
  /** The program looked for. */
  command: string;
  /** The arguments that make it print its version. */
  versionArgs: string[];
  /** The Debian/Ubuntu package. */
  debian: string;
  /** What follows `brew install` on macOS (`--cask …` for casks). */
  brew: string;
  /** The features that need it, in words. */
  features: string;
  /** Only the test suite needs it: doctor reports it missing without failing, `setup --strict` still requires it. */
  testsOnly?: boolean;
}

let cached: SystemPackage[] | undefined;

/** Every package of scripts/system-packages.json, in its order. Throws when the file is missing or malformed. */
export function systemPackages(): SystemPackage[] {
  if (!cached) {
    const file = join(packageRoot(), 'scripts', 'system-packages.json');
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { packages?: unknown };
    if (!Array.isArray(parsed.packages)) throw new Error(`${file} has no "packages" list`);
    cached = parsed.packages as SystemPackage[];
  }
  return cached;
}

/** The command that installs `packages` here: Homebrew on macOS, apt-get everywhere else (as scripts/setup.mjs says). */
export function installCommand(packages: readonly SystemPackage[], platform: NodeJS.Platform = process.platform): string {
  if (platform !== 'darwin') return `${process.getuid?.() === 0 ? '' : 'sudo '}apt-get install -y ${packages.map((pkg) => pkg.debian).join(' ')}`;
  const casks = packages.filter((pkg) => pkg.brew.startsWith('--cask ')).map((pkg) => pkg.brew.slice('--cask '.length));
  const formulae = packages.filter((pkg) => !pkg.brew.startsWith('--cask ')).map((pkg) => pkg.brew);
  return [...(formulae.length > 0 ? [`brew install ${formulae.join(' ')}`] : []), ...(casks.length > 0 ? [`brew install --cask ${casks.join(' ')}`] : [])].join(
    ' && ',
  );
}

/** True in a clone of the repository, where `npm run setup` exists; false in an installed package. */
export function isRepositoryClone(): boolean {
  try {
    return existsSync(join(packageRoot(), 'scripts', 'setup.mjs'));
  } catch {
    return false;
  }
}

/** The one command that sets up everything missing: `npm run setup` in a clone, else the install command. */
export function setupCommand(packages: readonly SystemPackage[], platform: NodeJS.Platform = process.platform): string {
  return isRepositoryClone() ? 'npm run setup' : installCommand(packages, platform);
}

/**
 * The hint of a "not found" error for the package `name`: the set-up command, an alternative when there is one (set
 * CHROME_PATH …), and `gantry doctor`, which checks everything else. Never throws: an unreadable list gives a plainer
 * hint rather than hiding the error it belongs to.
 */
export function missingToolHint(name: string, alternative?: string): string {
  let how: string;
  try {
    const pkg = systemPackages().find((candidate) => candidate.name === name);
    if (!pkg) how = `install ${name}`;
    else how = isRepositoryClone() ? `run \`npm run setup\` (or \`${installCommand([pkg])}\`)` : `run \`${installCommand([pkg])}\``;
  } catch {
    how = `install ${name}`;
  }
  return `${how}${alternative ? `, or ${alternative}` : ''}; \`gantry doctor\` shows what else is missing`;
}
