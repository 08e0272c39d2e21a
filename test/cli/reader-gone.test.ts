// SERVE-READER-GONE (issue 26): every command that runs until stopped — the dev servers, `mcp serve`, `hooks serve`,
// `hooks worker`, `storage changes --watch` — stops as on Ctrl-C, exit 0, within about a second of its stdout's reader
// going away, though it writes nothing more: through a real `| head -1` in bash (a pipe), and with a reader that
// closes its end of a socket after the first line (what Node's spawn gives a child). A reader that stays keeps it
// running, and a file or /dev/null as stdout is no reader to lose.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { harness, type Harness, TOKEN } from '../devserver/storage/helpers.js';
import { requireRedisServer, startRedis, type RedisPeer } from '../peers/redis.js';

const bin = fileURLToPath(new URL('../../dist/lib/cli/main.js', import.meta.url));
/** How long after the reader left the command may take to stop: "about a second", with room for a loaded machine. */
const NOTICED_WITHIN_MS = 3000;
/** A command that does not stop by itself is killed after this, and the test fails on its signal. */
const GUARD_MS = 20_000;

let home: string;
const baseEnv = () => ({
  PATH: process.env.PATH!,
  HOME: home,
  XDG_STATE_HOME: join(home, 'state'),
  GANTRY_CONFIG_DIR: join(home, 'config'),
  GANTRY_LOG: 'warn',
});
const quote = (a: string) => `'${a.replaceAll("'", "'\\''")}'`;

interface Stopped {
  code: number | null;
  firstLine: string;
  /** From the first line reaching the reader to the command's end. */
  afterReaderMs: number;
  stderr: string;
}

/** `gantry <args> 2>err | head -1` in bash; gantry's own exit code (PIPESTATUS) and when it came. */
function throughHead(args: string[], env: Record<string, string> = {}): Promise<Stopped> {
  const errFile = join(home, `err-${Math.random().toString(36).slice(2)}`);
  const script = `"${process.execPath}" "${bin}" ${args.map(quote).join(' ')} 2>"${errFile}" | head -1; echo "exit=\${PIPESTATUS[0]}"`;
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['--norc', '-c', script], { env: { ...baseEnv(), ...env } });
    const guard = setTimeout(() => spawn('pkill', ['-KILL', '-P', String(child.pid)]), GUARD_MS);
    let out = '';
    let firstAt = 0;
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (firstAt === 0 && out.includes('\n')) firstAt = Date.now();
    });
    child.on('error', reject);
    child.on('close', () => {
      const endedAt = Date.now();
      clearTimeout(guard);
      void readFile(errFile, 'utf8')
        .catch(() => '')
        .then((stderr) => {
          const exit = /exit=(\d+)/.exec(out);
          resolve({ code: exit ? Number(exit[1]) : null, firstLine: out.split('\n')[0]!, afterReaderMs: endedAt - firstAt, stderr });
        });
    });
  });
}

/** `gantry <args>` whose reader (a socket's other end) closes after the first line. */
function socketReaderLeaves(args: string[], env: Record<string, string> = {}): Promise<Stopped> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { env: { ...baseEnv(), ...env } });
    const guard = setTimeout(() => child.kill('SIGKILL'), GUARD_MS);
    let out = '';
    let stderr = '';
    let firstAt = 0;
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (firstAt === 0 && out.includes('\n')) {
        firstAt = Date.now();
        child.stdout.destroy();
      }
    });
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(guard);
      resolve({ code, firstLine: out.split('\n')[0]!, afterReaderMs: Date.now() - firstAt, stderr });
    });
  });
}

function assertStopped(what: string, run: Stopped, firstLine: RegExp): void {
  assert.equal(run.code, 0, `${what}: stopped as on Ctrl-C, exit 0 (null: it was still running after ${GUARD_MS} ms): ${run.stderr}`);
  assert.match(run.firstLine, firstLine, what);
  assert.ok(run.afterReaderMs < NOTICED_WITHIN_MS, `${what}: stopped ${run.afterReaderMs} ms after its reader left`);
  assert.doesNotMatch(run.stderr, /EPIPE|ERR_STREAM_DESTROYED|Unhandled|\n\s+at /, what);
}

describe('SERVE-READER-GONE: a command that runs until stopped stops when its reader goes away, without writing', function () {
  this.timeout(240_000);
  let storage: Harness;
  let redis: RedisPeer;

  before(async () => {
    requireRedisServer();
    home = await mkdtemp(join(tmpdir(), 'gantry-reader-gone-'));
    storage = await harness();
    redis = await startRedis();
  });
  after(async () => {
    await storage?.close();
    await redis?.stop();
    await rm(home, { recursive: true, force: true });
  });

  const servers: Array<{ args: string[]; env?: () => Record<string, string>; first: RegExp }> = [
    { args: ['dev', 'registry', '--port', '0'], first: /registry/i },
    { args: ['dev', 'secrets', '--port', '0'], first: /secrets|SECRETS_ADDR/i },
    { args: ['dev', 'platform', '--port', '0'], first: /^platform API on http:\/\/127\.0\.0\.1:\d+/ },
    { args: ['dev', 'oauth', '--port', '0'], first: /^authorization server .* on http:\/\/127\.0\.0\.1:\d+/ },
    { args: ['dev', 'storage', '--port', '0'], first: /^STORAGE_BASE_URL=http:\/\/127\.0\.0\.1:\d+$/ },
    { args: ['mcp', 'serve', '--port', '0', '--no-auth'], first: /^context server on http:\/\/127\.0\.0\.1:\d+\/mcp/ },
    {
      args: ['hooks', 'serve', '--port', '0'],
      env: () => ({ GANTRY_WEBHOOK_SECRET: 'reader-gone-secret' }),
      first: /^receiving webhooks on http:\/\/127\.0\.0\.1:\d+\/hooks/,
    },
    { args: ['hooks', 'worker'], env: () => ({ GANTRY_HOOKS_QUEUE_URL: redis.url }), first: /^working webhook jobs from redis:\/\/127\.0\.0\.1:\d+/ },
    {
      args: ['storage', 'changes', '--watch', '--listen', '127.0.0.1:0'],
      env: () => ({ STORAGE_BASE_URL: storage.server.url, STORAGE_TOKEN: TOKEN }),
      first: /^notification 1: sync at \S+Z$/,
    },
  ];

  for (const { args, env, first } of servers) {
    it(`SERVE-READER-GONE: gantry ${args.join(' ')} | head -1 — exit 0 within a second of head leaving (a pipe)`, async () => {
      assertStopped(`gantry ${args.join(' ')} | head -1`, await throughHead(args, env?.()), first);
    });

    it(`SERVE-READER-GONE: gantry ${args.join(' ')} with a socket reader that closes after the first line — exit 0 within a second`, async () => {
      assertStopped(`gantry ${args.join(' ')} (socket)`, await socketReaderLeaves(args, env?.()), first);
    });
  }

  it('SERVE-READER-GONE: gantry dev (every server) | head -1 — exit 0 within a second of head leaving', async () => {
    assertStopped('gantry dev | head -1', await throughHead(['dev']), /^SERVER\s+ADDRESS\s+CREDENTIALS$/);
  });

  it('SERVE-READER-GONE: a pipe whose reader stays, a file and /dev/null keep it serving until Ctrl-C (exit 0); the pipe ends with it', async () => {
    // A named pipe gives the test the reader's end of a real pipe (a shell's `|` is one too).
    const fifo = join(home, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const readEnd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writeEnd = openSync(fifo, 'w');
    const reader = new Socket({ fd: readEnd, readable: true, writable: false });
    let read = '';
    reader.on('data', (c: Buffer) => (read += c.toString()));
    const endOfPipe = new Promise<number>((resolve) => reader.once('end', () => resolve(Date.now())));
    const file = join(home, 'out.txt');
    const fileFd = openSync(file, 'w');
    const runs = [
      { what: 'a pipe whose reader stays', stdout: writeEnd },
      { what: 'a file', stdout: fileFd },
      { what: '/dev/null', stdout: 'ignore' as const },
    ].map(({ what, stdout }) => ({
      what,
      child: spawn(process.execPath, [bin, 'dev', 'platform', '--port', '0'], { env: baseEnv(), stdio: ['ignore', stdout, 'pipe'] }),
    }));
    closeSync(writeEnd);
    closeSync(fileFd);
    try {
      await new Promise((resolve) => setTimeout(resolve, 4000));
      for (const { what, child } of runs) assert.equal(child.exitCode, null, `stdout ${what}: still serving`);
      assert.match(read, /^platform API on http:\/\/127\.0\.0\.1:\d+/, 'the reader that stays has its lines');
      assert.match(await readFile(file, 'utf8'), /^platform API on http:\/\/127\.0\.0\.1:\d+/);
      for (const { what, child } of runs) {
        const closed = new Promise<[number | null, number]>((resolve) => child.once('close', (code) => resolve([code, Date.now()])));
        child.kill('SIGINT');
        const [code, at] = await closed;
        assert.equal(code, 0, `stdout ${what}: Ctrl-C stops it with 0`);
        // Nothing it started (the pipe's watcher) holds the pipe open after it: the reader sees the end at once.
        if (child === runs[0]!.child) assert.ok((await endOfPipe) - at < 1500, 'the pipe ended with the command');
      }
    } finally {
      for (const { child } of runs) if (child.exitCode === null) child.kill('SIGKILL');
      reader.destroy();
    }
  });
});
