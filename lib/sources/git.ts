import { spawn } from 'node:child_process';
import { expectObject, expectOptions, expectString } from '../arguments.js';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ExitCode, GantryError } from '../errors.js';
import { redact, redactUrl } from '../http/index.js';
import { missingToolHint } from '../system-packages.js';
import type { GitLocation } from './location.js';
import type { SourceErrorCode } from './errors.js';

export class GitError extends GantryError {
  constructor(message: string, hint?: string) {
    super(redact(message), { code: 'GIT_FAILED' satisfies SourceErrorCode, exitCode: ExitCode.remote, ...(hint === undefined ? {} : { hint }) });
  }
}

/** The git subcommand of `args`, past any leading `-c name=value` pairs (so "git clone failed", never "git advice.… failed"). */
function subcommand(args: string[]): string {
  let i = 0;
  while (args[i] === '-c') i += 2;
  return args[i] ?? '';
}

function run(args: string[], cwd: string | undefined, allowFile: boolean): Promise<string> {
  // Only the transports a module source may use; `ext::` and friends never run, file:// only for trusted callers.
  const protocol = [
    '-c',
    'protocol.allow=never',
    '-c',
    'protocol.https.allow=always',
    '-c',
    'protocol.http.allow=always',
    '-c',
    'protocol.ssh.allow=always',
    '-c',
    `protocol.file.allow=${allowFile ? 'always' : 'never'}`,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn('git', [...protocol, ...args], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: 'echo', GIT_SSH_COMMAND: process.env.GIT_SSH_COMMAND ?? 'ssh -o BatchMode=yes' },
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      out += text;
    });
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      if (err.length < 4000) err += text;
    });
    child.on('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'ENOENT'
          ? new GitError('git sources need the "git" program, which is not installed (not found on PATH)', missingToolHint('git'))
          : error,
      );
    });
    child.on('close', (code) => {
      if (code === 0) resolve(out);
      else reject(new GitError(`git ${subcommand(args)} failed: ${err.trim().split('\n').slice(-2).join(' ')}`));
    });
  });
}

const commitPattern = /^[0-9a-f]{7,40}$/i;

function describe(location: GitLocation): string {
  const url = /^[a-z]+:\/\//i.test(location.url) ? redactUrl(location.url) : location.url;
  return location.ref === undefined ? url : `${url} at ${location.ref}`;
}

/**
 * Clones a git location into `target` (which must not exist) with the system git, shallow where possible, then drops
 * `.git`. The URL and ref always come after `--end-of-options` or glued to their option, so neither can become one.
 */
export async function fetchGit(location: GitLocation, target: string, options: { allowFile?: boolean } = {}): Promise<void> {
  expectObject('fetchGit', 'location', location, 'a git location from parseLocation');
  expectString('fetchGit', 'location.url', location.url, 'a repository URL');
  expectString('fetchGit', 'target', target, 'the path of a folder that does not exist yet');
  expectOptions('fetchGit', options);
  const allowFile = options?.allowFile ?? false;
  const { ref } = location;
  if (ref !== undefined && ref.startsWith('-')) throw new GitError(`the git ref "${ref}" starts with "-"`);
  try {
    if (ref !== undefined && commitPattern.test(ref)) {
      // A commit cannot be named by --branch: clone, then check it out detached.
      const depth = location.depth === undefined ? [] : [`--depth=${location.depth}`, '--no-single-branch'];
      await run(['clone', '--quiet', '--no-checkout', ...depth, '--end-of-options', location.url, target], undefined, allowFile);
      const commit = (await run(['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`], target, allowFile)).trim();
      await run(['-c', 'advice.detachedHead=false', 'checkout', '--quiet', '--detach', commit, '--'], target, allowFile);
    } else {
      const depth = `--depth=${location.depth ?? 1}`;
      const branch = ref === undefined ? [] : [`--branch=${ref}`];
      await run(
        ['-c', 'advice.detachedHead=false', 'clone', '--quiet', depth, '--single-branch', ...branch, '--end-of-options', location.url, target],
        undefined,
        allowFile,
      );
    }
  } catch (error) {
    if (error instanceof GitError)
      throw new GitError(
        `cloning ${describe(location)} failed: ${error.message.replace(/^git \w+ failed: /, '')}`,
        error.hint ?? 'check the repository URL, the ref and your git credentials',
      );
    throw error;
  }
  await rm(join(target, '.git'), { recursive: true, force: true });
}
