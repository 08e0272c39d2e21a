// Every "not found" error (no Chromium, no chromedriver, no git, no xz or bzip2) names `gantry doctor` and the set-up
// command of scripts/system-packages.json: `npm run setup` in this clone, and the package's own install line.
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrowserLaunchError, resolveChromeDriverPath, resolveChromePath } from '../../lib/browser/locate.js';
import { extractArchive } from '../../lib/sources/archive.js';
import { fetchGit, GitError } from '../../lib/sources/git.js';
import { defaultLimits } from '../../lib/sources/limits.js';
import { installCommand, isRepositoryClone, missingToolHint, systemPackages } from '../../lib/system-packages.js';
import { GantryError } from '../../lib/errors.js';

const listed = JSON.parse(await readFile(new URL('../../scripts/system-packages.json', import.meta.url), 'utf8')) as {
  packages: Array<{ name: string; debian: string }>;
};

/** Root installs without sudo, as the set-up script does. */
const sudo = process.getuid?.() === 0 ? '' : 'sudo ';

function assertNamesSetup(hint: string | undefined, debian: string): void {
  assert.ok(hint, 'a hint');
  assert.match(hint, /`gantry doctor`/);
  assert.match(hint, /`npm run setup`/, 'in a clone, the set-up script');
  assert.ok(hint.includes(`${sudo}apt-get install -y ${debian}`), `the install line of ${debian}: ${hint}`);
}

/** Each attempt throws a BrowserLaunchError whose hint names the set-up command, `gantry doctor` and `variable`. */
function assertLaunchHints(attempts: Array<() => unknown>, debian: string, variable: string): void {
  for (const attempt of attempts) {
    assert.throws(attempt, (error: unknown) => {
      assert.ok(error instanceof BrowserLaunchError);
      assertNamesSetup(error.hint, debian);
      assert.match(error.hint!, new RegExp(variable));
      return true;
    });
  }
}

describe('"not found" errors name gantry doctor and the set-up command', () => {
  let dir: string;
  let savedPath: string | undefined;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gantry-hints-'));
    await writeFile(join(dir, 'not-executable'), 'no');
    await chmod(join(dir, 'not-executable'), 0o644);
  });
  after(() => rm(dir, { recursive: true, force: true }));
  beforeEach(() => {
    savedPath = process.env.PATH;
  });
  afterEach(() => {
    process.env.PATH = savedPath;
  });

  it('reads the one list, scripts/system-packages.json, and builds apt-get and brew lines from it', () => {
    assert.deepEqual(
      systemPackages().map((pkg) => pkg.name),
      listed.packages.map((pkg) => pkg.name),
    );
    assert.equal(isRepositoryClone(), true);
    const pair = systemPackages().filter((pkg) => pkg.name === 'chromium' || pkg.name === 'git');
    assert.equal(installCommand(pair, 'linux'), `${sudo}apt-get install -y chromium git`);
    assert.equal(installCommand(pair, 'darwin'), 'brew install git && brew install --cask chromium');
  });

  it('no Chromium, or CHROME_PATH at a file that is not executable: BrowserLaunchError with the hint', () => {
    const tries = [
      () => resolveChromePath(undefined, { CHROME_PATH: join(dir, 'not-executable') }),
      () => resolveChromePath(undefined, { CHROME_PATH: join(dir, 'absent') }),
    ];
    assertLaunchHints(tries, 'chromium', 'CHROME_PATH');
  });

  it('no chromedriver on PATH, or CHROMEDRIVER_PATH not executable: BrowserLaunchError with the hint', () => {
    const tries = [() => resolveChromeDriverPath(undefined, { CHROMEDRIVER_PATH: join(dir, 'not-executable') })];
    // Without /usr/bin/chromedriver the PATH search is what decides: only testable where it is absent.
    try {
      resolveChromeDriverPath(undefined, { PATH: dir });
    } catch {
      tries.push(() => resolveChromeDriverPath(undefined, { PATH: dir }));
    }
    assertLaunchHints(tries, 'chromium-driver', 'CHROMEDRIVER_PATH');
  });

  it('git missing from PATH: GitError with the hint', async () => {
    process.env.PATH = dir;
    const location = { getter: 'git', url: 'https://example.invalid/repo.git', ref: undefined, depth: undefined } as Parameters<typeof fetchGit>[0];
    await assert.rejects(fetchGit(location, join(dir, 'clone')), (error: unknown) => {
      assert.ok(error instanceof GitError);
      assert.match(error.message, /need the "git" program, which is not installed/);
      assertNamesSetup(error.hint, 'git');
      return true;
    });
  });

  for (const [type, command, debian] of [
    ['tar.xz', 'xz', 'xz-utils'],
    ['tar.bz2', 'bzip2', 'bzip2'],
  ] as const) {
    it(`${command} missing from PATH: a ${type} archive fails with the hint`, async () => {
      const file = join(dir, `module.${type}`);
      await writeFile(file, Buffer.alloc(64));
      process.env.PATH = dir;
      await assert.rejects(extractArchive(file, type, join(dir, `out-${command}`), defaultLimits), (error: unknown) => {
        assert.ok(error instanceof GantryError);
        assert.match(error.message, new RegExp(`needs the "${command}" program, which is not installed`));
        assertNamesSetup(error.hint, debian);
        return true;
      });
    });
  }

  it('a package the list does not name still gets a hint naming gantry doctor', () => {
    assert.match(missingToolHint('no-such-tool'), /install no-such-tool.*`gantry doctor`/);
  });
});
