// The class "a closed pipe crashes the command" (issue 11): every command of the tree, its --help and `help <command>`,
// run through a real `| head -1` in bash and with a reader that is gone before the first byte. Each ends quietly
// — no EPIPE, no stack — with the exit code it has when its whole output is read.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { buildProgram } from '../../lib/cli/program.js';
import { groupsFor } from '../../lib/cli/groups.js';
import { createOutput } from '../../lib/cli/output.js';
import { createLogger } from '../../lib/log.js';

const bin = fileURLToPath(new URL('../../dist/lib/cli/main.js', import.meta.url));
const env = { PATH: process.env.PATH!, HOME: process.env.HOME!, GANTRY_LOG: 'warn' };

const everyGroup = await groupsFor([]);

/** Every command path of the program: `[]`, `['modules']`, `['modules', 'install']`, … */
function commandPaths(): string[][] {
  const program = buildProgram({ out: createOutput(), logger: createLogger(), globals: () => ({ json: false, verbose: false }) }, { groups: everyGroup });
  const paths: string[][] = [];
  const walk = (command: Command, path: string[]) => {
    paths.push(path);
    for (const sub of command.commands) walk(sub, [...path, sub.name()]);
  };
  walk(program, []);
  return paths;
}

interface Piped {
  code: number;
  firstLine: string;
  stderr: string;
}

/**
 * `gantry <args> | head -1` in bash; the code is gantry's own (PIPESTATUS[0]), its stderr goes straight to this
 * process (no file to cat and remove: two processes fewer per case).
 */
function throughHead(args: string[]): Promise<Piped> {
  const quoted = args.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  const script = `"${process.execPath}" "${bin}" ${quoted} | head -1; echo "exit=\${PIPESTATUS[0]}"`;
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['--norc', '-c', script], { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', () => {
      const lines = stdout.split('\n');
      const exit = /exit=(\d+)/.exec(stdout);
      resolve({ code: Number(exit?.[1] ?? -1), firstLine: lines[0] ?? '', stderr });
    });
  });
}

/** The reader is gone before the command writes a byte. */
function closedBeforeStart(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { env });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

async function inBatches<T, R>(items: T[], size: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += size) results.push(...(await Promise.all(items.slice(i, i + size).map(work))));
  return results;
}

const crash = /EPIPE|ERR_STREAM_DESTROYED|Unhandled|\n\s+at /;

describe('closed pipe: every command ends quietly when its reader goes away', function () {
  this.timeout(240_000);
  const paths = commandPaths();

  it('the tree has the groups and their commands', () => {
    const names = paths.map((p) => p.join(' '));
    for (const expected of ['modules install', 'secrets get', 'gate', 'browser check', 'doctor', 'dev', 'demo']) assert.ok(names.includes(expected), expected);
  });

  it('`gantry <command> --help | head -1`: the usage line, exit 0, nothing on stderr, for every command', async () => {
    const runs = await inBatches(paths, 4, async (path) => ({ path, run: await throughHead([...path, '--help']) }));
    for (const { path, run } of runs) {
      const what = `gantry ${path.join(' ')} --help`;
      assert.equal(run.code, 0, `${what}: ${run.stderr}`);
      assert.match(run.firstLine, /^Usage: gantry/, what);
      assert.doesNotMatch(run.stderr, crash, what);
    }
  });

  it("`gantry <group> help <command> | head -1` shows that command's usage, never runs it", async () => {
    const pairs = paths.filter((p) => p.length === 2 && p[1] !== 'help');
    const runs = await inBatches(pairs, 4, async (path) => ({ path, run: await throughHead([path[0]!, 'help', path[1]!]) }));
    for (const { path, run } of runs) {
      const what = `gantry ${path[0]} help ${path[1]}`;
      assert.equal(run.code, 0, `${what}: ${run.stderr}`);
      assert.match(run.firstLine, new RegExp(`^Usage: gantry ${path[0]} ${path[1]}\\b`), what);
      assert.doesNotMatch(run.stderr, crash, what);
    }
  });

  it('a reader gone before the first byte: --help of every group, and a usage error, end with their own codes and no stack', async () => {
    const groups = paths.filter((p) => p.length <= 1);
    const runs = await inBatches(groups, 4, async (path) => ({ path, run: await closedBeforeStart([...path, '--help']) }));
    for (const { path, run } of runs) {
      assert.equal(run.code, 0, `gantry ${path.join(' ')} --help: ${run.stderr}`);
      assert.doesNotMatch(run.stderr, crash);
    }
    const bad = await closedBeforeStart(['modules', 'install', '--no-such-flag']);
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /unknown option/);
    assert.doesNotMatch(bad.stderr, crash);
  });

  it('a full disk (stdout is /dev/full): one line on stderr naming ENOSPC, exit 2 for a command that had succeeded, no stack', () => {
    for (const args of [['--help'], ['modules', '--help'], ['--version'], ['nosuch']]) {
      const run = spawnSync('bash', ['--norc', '-c', `"${process.execPath}" "${bin}" ${args.join(' ')} > /dev/full`], { env, encoding: 'utf8' });
      const what = `gantry ${args.join(' ')} > /dev/full`;
      assert.equal(run.status, 2, `${what}: ${run.stderr}`);
      assert.doesNotMatch(run.stderr, /\n\s+at |Unhandled/, what);
      if (args[0] !== 'nosuch') assert.match(run.stderr, /^error: the output could not be written to stdout: ENOSPC \(no space left on the device\)$/m, what);
    }
  });

  it('a long listing cut by head: --version and the root help as well', () => {
    const version = spawnSync('bash', ['--norc', '-c', `"${process.execPath}" "${bin}" --version | head -1`], { env, encoding: 'utf8' });
    assert.match(version.stdout, /^\d+\.\d+\.\d+/);
    assert.doesNotMatch(version.stderr, crash);
  });
});
