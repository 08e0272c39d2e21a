import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { lstat, mkdir, mkdtemp, readFile, rm, symlink, writeFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseLocation } from '../../lib/registry/location.js';
import type { GitLocation } from '../../lib/sources/location.js';
import { fetchSource } from '../../lib/sources/fetch.js';
import { fetchGit, GitError } from '../../lib/sources/git.js';

/** Real git repositories in a temp folder; no network. */
describe('sources: git fetcher (system git, real repositories)', () => {
  let dir: string;
  let repo: string;
  let firstCommit: string;
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', args, {
      cwd,
      env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' },
    })
      .toString()
      .trim();

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gantry-git-'));
    repo = join(dir, 'network');
    await mkdir(join(repo, 'modules', 'vpc'), { recursive: true });
    git(repo, 'init', '--quiet', '--initial-branch=main');
    await writeFile(join(repo, 'main.tf'), 'v1\n');
    await writeFile(join(repo, 'modules', 'vpc', 'main.tf'), 'vpc v1\n');
    await writeFile(join(repo, 'run.sh'), '#!/bin/sh\n');
    await chmod(join(repo, 'run.sh'), 0o755);
    git(repo, 'add', '.');
    git(repo, 'commit', '--quiet', '-m', 'one');
    firstCommit = git(repo, 'rev-parse', 'HEAD');
    git(repo, 'tag', 'v1.0.0');
    await writeFile(join(repo, 'main.tf'), 'v2\n');
    git(repo, 'commit', '--quiet', '-am', 'two');
    git(repo, 'tag', 'v2.0.0');
    git(repo, 'checkout', '--quiet', '-b', 'feature');
    await writeFile(join(repo, 'main.tf'), 'feature\n');
    git(repo, 'commit', '--quiet', '-am', 'three');
    git(repo, 'checkout', '--quiet', 'main');
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const url = () => pathToFileURL(repo).toString();

  it('clones the default branch shallowly and drops .git', async () => {
    const target = join(dir, 'out-default');
    // fetchGit drops .git, so the clone is looked at before that: a post-checkout hook (which git clone runs in the new
    // repository once it is checked out) records whether it is shallow, how many commits it holds and which refs it
    // fetched. The hook comes in through git's environment configuration, which fetchGit passes on to git unchanged.
    assert.equal(git(repo, 'rev-list', '--count', 'main'), '2');
    const hooks = join(dir, 'report-hooks');
    const report = join(dir, 'clone-report');
    await mkdir(hooks);
    await writeFile(
      join(hooks, 'post-checkout'),
      `#!/bin/sh\n{ git rev-parse --is-shallow-repository; git rev-list --count HEAD; git for-each-ref --format='%(refname)'; } > '${report}'\n`,
    );
    await chmod(join(hooks, 'post-checkout'), 0o755);
    const saved = {
      GIT_CONFIG_COUNT: process.env.GIT_CONFIG_COUNT,
      GIT_CONFIG_KEY_0: process.env.GIT_CONFIG_KEY_0,
      GIT_CONFIG_VALUE_0: process.env.GIT_CONFIG_VALUE_0,
    };
    Object.assign(process.env, { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.hooksPath', GIT_CONFIG_VALUE_0: hooks });
    try {
      await fetchGit({ getter: 'git', url: url(), ref: undefined, depth: undefined, subdir: '' }, target, { allowFile: true });
    } finally {
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
    assert.equal(await readFile(join(target, 'main.tf'), 'utf8'), 'v2\n');
    await assert.rejects(lstat(join(target, '.git')));
    const [shallow, commits, ...refs] = (await readFile(report, 'utf8')).trim().split('\n');
    assert.equal(shallow, 'true', 'the clone is shallow');
    assert.equal(commits, '1', 'the clone holds one commit of the two on main');
    // Only the default branch, and of the tags only the one on the fetched commit (v1.0.0 is on the commit left out).
    assert.deepEqual(refs.sort(), ['refs/heads/main', 'refs/remotes/origin/HEAD', 'refs/remotes/origin/main', 'refs/tags/v2.0.0']);
  });

  it('checks out a tag, a branch and a commit named by ?ref=', async () => {
    for (const [ref, expected] of [
      ['v1.0.0', 'v1\n'],
      ['feature', 'feature\n'],
      [firstCommit, 'v1\n'],
      [firstCommit.slice(0, 10), 'v1\n'],
    ] as const) {
      const target = join(dir, `out-${ref}`);
      await fetchGit({ getter: 'git', url: url(), ref, depth: undefined, subdir: '' }, target, { allowFile: true });
      assert.equal(await readFile(join(target, 'main.tf'), 'utf8'), expected, ref);
    }
  });

  it('installs through fetchSource with //subdir, a stable hash, and normalised modes', async () => {
    const location = parseLocation(`git::${url()}//modules/vpc?ref=v1.0.0`, { trusted: true });
    const first = await fetchSource(location, { dest: join(dir, 'inst', 'a'), trusted: true });
    const second = await fetchSource(location, { dest: join(dir, 'inst', 'b'), trusted: true });
    assert.equal(first.hash, second.hash);
    assert.equal(await readFile(join(first.path, 'main.tf'), 'utf8'), 'vpc v1\n');
    assert.equal((await lstat(join(first.dir, 'run.sh'))).mode & 0o777, 0o755);
  });

  it('a ref can never become an option: "--upload-pack=..." is refused before git runs, and an unknown ref fails cleanly', async () => {
    const evil: GitLocation = { getter: 'git', url: url(), ref: '--upload-pack=touch /tmp/gantry-pwned', depth: undefined, subdir: '' };
    await assert.rejects(fetchGit(evil, join(dir, 'out-evil'), { allowFile: true }), /starts with "-"/);
    await assert.rejects(lstat('/tmp/gantry-pwned'));
    await assert.rejects(
      fetchGit({ getter: 'git', url: url(), ref: 'no-such-tag', depth: undefined, subdir: '' }, join(dir, 'out-missing'), { allowFile: true }),
      /^GitError: cloning file:\S+ at no-such-tag failed: (?!git )(.* )?fatal: Remote branch no-such-tag not found in upstream origin$/,
    );
  });

  it('a URL that passes the ref guard reaches git only as the repository: "--upload-pack=..." after --end-of-options never runs', async () => {
    // The target is itself a clonable URL: were the URL read as an option, the target would be the only operand, so
    // git would clone the test repository through the given upload-pack program and the marker would appear. After
    // --end-of-options, git names the URL as the (missing) repository and starts no transport at all.
    const marker = join(dir, 'upload-pack-ran');
    const evil = `--upload-pack=touch ${marker}`;
    await assert.rejects(
      fetchGit({ getter: 'git', url: evil, ref: undefined, depth: undefined, subdir: '' }, url(), { allowFile: true }),
      (error: unknown) => error instanceof GitError && error.message === `cloning ${evil} failed: fatal: repository '${evil}' does not exist`,
    );
    await assert.rejects(lstat(marker), { code: 'ENOENT' });
  });

  it('a repository URL starting with "-" is refused, and file:// needs a trusted caller', async () => {
    await assert.rejects(
      fetchGit({ getter: 'git', url: '--upload-pack=touch /tmp/x', ref: undefined, depth: undefined, subdir: '' }, join(dir, 'o1'), { allowFile: true }),
      /^GitError: cloning --upload-pack=touch \/tmp\/x failed: fatal: repository '--upload-pack=touch \/tmp\/x' does not exist$/,
    );
    await assert.rejects(
      fetchGit({ getter: 'git', url: url(), ref: undefined, depth: undefined, subdir: '' }, join(dir, 'o2'), { allowFile: false }),
      /failed/,
    );
  });

  it('refuses a repository whose symbolic link points outside the module, leaving the previous install', async () => {
    const bad = join(dir, 'bad');
    await mkdir(bad);
    git(bad, 'init', '--quiet', '--initial-branch=main');
    await writeFile(join(bad, 'main.tf'), 'x\n');
    await symlink('../../../../etc/passwd', join(bad, 'passwd'));
    git(bad, 'add', '.');
    git(bad, 'commit', '--quiet', '-m', 'evil');
    const dest = join(dir, 'inst', 'bad');
    await fetchSource(parseLocation(`git::${url()}?ref=v1.0.0`, { trusted: true }), { dest, trusted: true });
    await assert.rejects(
      fetchSource(parseLocation(`git::${pathToFileURL(bad).toString()}`, { trusted: true }), { dest, trusted: true }),
      /points outside the module/,
    );
    assert.equal(await readFile(join(dest, 'main.tf'), 'utf8'), 'v1\n');
  });

  it('refuses a repository whose chain of symbolic links escapes though each link alone stays inside', async () => {
    const bad = join(dir, 'bad-chain');
    await mkdir(join(bad, 'p', 'q'), { recursive: true });
    git(bad, 'init', '--quiet', '--initial-branch=main');
    await writeFile(join(bad, 'main.tf'), 'x\n');
    await symlink('../..', join(bad, 'p', 'q', 'x'));
    await symlink('x/../../..', join(bad, 'p', 'q', 'l'));
    git(bad, 'add', '.');
    git(bad, 'commit', '--quiet', '-m', 'evil chain');
    const dest = join(dir, 'inst', 'bad-chain');
    await fetchSource(parseLocation(`git::${url()}?ref=v1.0.0`, { trusted: true }), { dest, trusted: true });
    await assert.rejects(
      fetchSource(parseLocation(`git::${pathToFileURL(bad).toString()}`, { trusted: true }), { dest, trusted: true }),
      /"p\/q\/l" \(-> "x\/..\/..\/.."\) is refused: it points outside the module/,
    );
    assert.equal(await readFile(join(dest, 'main.tf'), 'utf8'), 'v1\n');
  });
});
