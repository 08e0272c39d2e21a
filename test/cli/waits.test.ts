// WAIT-SAID-AND-BOUNDED (issue 26): no command waits in silence or without bound. Against a server that accepts and
// never answers, every group's command says on stderr what it waits for and until when, and gives up (exit 3) within
// `--timeout` (or GANTRY_TIMEOUT) per attempt; a bad value of either is exit 2 before a connection is made. Against the
// dev platform server with a tiny primary budget, a rate limit further away than `--max-wait` is exit 3 saying when
// it resets, and a nearer one is waited for, said first.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startPlatformServer, type PlatformServer } from '../../devserver/platform/index.js';

const bin = fileURLToPath(new URL('../../dist/lib/cli/main.js', import.meta.url));
const clock = /\d\d:\d\d:\d\d/;

interface Run {
  code: number | null;
  stderr: string;
  ms: number;
}

let home: string;

function gantry(
  args: string[],
  env: Record<string, string>,
  options: { onStderr?: (all: string, child: ChildProcess) => void; killAfterMs?: number } = {},
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(process.execPath, [bin, ...args], {
      env: { PATH: process.env.PATH!, HOME: home, XDG_STATE_HOME: join(home, 'state'), GANTRY_CONFIG_DIR: join(home, 'config'), GANTRY_LOG: 'warn', ...env },
    });
    const guard = setTimeout(() => child.kill('SIGKILL'), options.killAfterMs ?? 60_000);
    let stderr = '';
    child.stdout.resume();
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
      options.onStderr?.(stderr, child);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(guard);
      resolve({ code, stderr, ms: Date.now() - started });
    });
  });
}

/** A TCP server on 127.0.0.1 that accepts every connection and never answers; counts the connections. */
async function silentServer(): Promise<{ url: string; host: string; connections: () => number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let count = 0;
  const server: Server = createServer((socket) => {
    count += 1;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    connections: () => count,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('WAIT-SAID-AND-BOUNDED: every wait is said and bounded, in every group', function () {
  this.timeout(180_000);
  let silent: Awaited<ReturnType<typeof silentServer>>;

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'gantry-waits-'));
    silent = await silentServer();
  });
  after(async () => {
    await silent.close();
    await rm(home, { recursive: true, force: true });
  });

  const groups: Array<{ what: string; args: () => string[]; env: () => Record<string, string>; attempts: number }> = [
    {
      what: 'platform api',
      args: () => ['platform', 'api', '/repos/gantry/demo', '--api-url', silent.url, '--timeout', '2s'],
      env: () => ({ GANTRY_PLATFORM_TOKEN: 'ghp_waits-test-token' }),
      attempts: 3,
    },
    {
      what: 'secrets get',
      args: () => ['secrets', 'get', 'secret/app', '--timeout', '2s'],
      env: () => ({ SECRETS_ADDR: silent.url, SECRETS_TOKEN: 'waits-test-token' }),
      attempts: 3,
    },
    {
      what: 'auth login (GANTRY_TIMEOUT)',
      args: () => ['auth', 'login', '--auth-url', silent.url, '--client-id', 'waits', '--store', 'file'],
      env: () => ({ GANTRY_TIMEOUT: '2s' }),
      attempts: 1,
    },
    {
      what: 'mcp tools',
      args: () => ['mcp', 'tools', `${silent.url}/mcp`, '--timeout', '2', '--no-browser'],
      env: () => ({ GANTRY_TIMEOUT: '2s' }),
      attempts: 1,
    },
  ];

  for (const { what, args, env, attempts } of groups) {
    it(`WAIT-SAID-AND-BOUNDED: gantry ${what} against a server that never answers gives up after its attempts of 2 s each (exit 3), saying each retry`, async () => {
      const run = await gantry(args(), env());
      assert.equal(run.code, 3, run.stderr);
      assert.match(run.stderr, /ETIMEDOUT|timed out|no answer/i, run.stderr);
      // Each attempt waits 2 s, not 60: the whole run is bounded by the attempts and their backoff.
      assert.ok(run.ms < attempts * 2000 + 12_000, `${what} took ${run.ms} ms`);
      if (attempts > 1)
        assert.match(
          run.stderr,
          new RegExp(`^${silent.host.replace(/\./g, '\\.')}: network error ETIMEDOUT; trying again at ${clock.source} \\(attempt 2 of ${attempts}\\)$`, 'm'),
          run.stderr,
        );
    });
  }

  it('WAIT-SAID-AND-BOUNDED: storage about says its first retry at once and when it tries again', async () => {
    let saidAt = 0;
    const run = await gantry(
      ['storage', 'about', '--base-url', silent.url, '--timeout', '1s'],
      { STORAGE_TOKEN: 'ya29.waits-test-token' },
      {
        onStderr: (all, child) => {
          if (!saidAt && /trying again/.test(all)) {
            saidAt = Date.now();
            child.kill('SIGINT');
          }
        },
      },
    );
    assert.ok(saidAt > 0, run.stderr);
    assert.match(
      run.stderr,
      new RegExp(`^${silent.host.replace(/\./g, '\\.')}: network error ETIMEDOUT; trying again at ${clock.source} \\(attempt 2 of 6\\)$`, 'm'),
    );
  });

  it('WAIT-SAID-AND-BOUNDED: doctor against an endpoint that never answers says it is still checking, and how long a probe may take, before its table', async () => {
    let notedAt = 0;
    const started = Date.now();
    const run = await gantry(
      ['doctor', '--timeout', '8000'],
      { SECRETS_ADDR: silent.url },
      {
        onStderr: (all) => {
          if (!notedAt && /still checking/.test(all)) notedAt = Date.now();
        },
      },
    );
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /^still checking: a probe has not answered yet; each gives up after 8 s \(--timeout\)$/m);
    assert.ok(notedAt - started < 7_500, `said after ${notedAt - started} ms`);
  });

  it('WAIT-SAID-AND-BOUNDED: short attempts and short delays never add up to a silence: storage ls --timeout 1s says a retry at least every few seconds until it gives up', async () => {
    const started = Date.now();
    // When each line came, and until when it said the command would wait (a retry's "trying again at HH:MM:SS").
    const said: Array<{ at: number; until: number }> = [{ at: started, until: started }];
    let lines = 0;
    const run = await gantry(
      ['storage', 'ls', '--base-url', silent.url, '--timeout', '1s'],
      { STORAGE_TOKEN: 'ya29.waits-test-token' },
      {
        onStderr: (all) => {
          const allLines = all.split('\n');
          for (; lines < allLines.length - 1; lines += 1) {
            const at = Date.now();
            const clockTime = /trying again at (\d\d):(\d\d):(\d\d)/.exec(allLines[lines]!);
            const until = clockTime ? new Date(at).setHours(Number(clockTime[1]), Number(clockTime[2]), Number(clockTime[3]), 999) : at;
            said.push({ at, until: Math.max(at, until) });
          }
        },
        killAfterMs: 90_000,
      },
    );
    assert.equal(run.code, 3, run.stderr);
    // A silence starts when a line was written, or when the wait it announced ends; each is at most the 5 s after
    // which a retry is said again, plus one attempt of 1 s and some slack.
    const silences = said.slice(1).map((line, i) => line.at - said[i]!.until);
    assert.ok(Math.max(...silences) < 8_000, `silences of ${silences.join(', ')} ms in: ${run.stderr}`);
    assert.ok((run.stderr.match(/trying again at/g) ?? []).length >= 2, run.stderr);
  });

  it('WAIT-SAID-AND-BOUNDED: an answer that does not come for 10 s is said with the attempt and when it gives up', async () => {
    let saidAt = 0;
    const started = Date.now();
    const run = await gantry(
      ['secrets', 'get', 'secret/app', '--timeout', '30s'],
      { SECRETS_ADDR: silent.url, SECRETS_TOKEN: 'waits-test-token' },
      {
        onStderr: (all, child) => {
          if (!saidAt && /no answer yet/.test(all)) {
            saidAt = Date.now();
            child.kill('SIGINT');
          }
        },
        killAfterMs: 25_000,
      },
    );
    assert.ok(saidAt > 0, `nothing said: ${run.stderr}`);
    assert.ok(saidAt - started >= 9_500 && saidAt - started < 14_000, `said after ${saidAt - started} ms`);
    const line = new RegExp(
      `^waiting for ${silent.host.replace(/\./g, '\\.')}: no answer yet after 10 s \\(attempt 1 of 3, gives up at (${clock.source})\\)$`,
      'm',
    ).exec(run.stderr);
    assert.ok(line, run.stderr);
    const [h, m, s] = line[1]!.split(':').map(Number);
    const givesUp = new Date(started);
    givesUp.setHours(h!, m!, s!);
    const offset = (givesUp.getTime() - started + 86_400_000) % 86_400_000;
    assert.ok(offset >= 29_000 && offset <= 32_000, `gives up ${offset} ms after the start, as --timeout 30s says`);
  });

  it('WAIT-SAID-AND-BOUNDED: a bad --timeout, --max-wait, GANTRY_TIMEOUT or GANTRY_MAX_WAIT is exit 2 before any connection', async () => {
    const before = silent.connections();
    const token = { GANTRY_PLATFORM_TOKEN: 'ghp_waits-test-token' };
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [['--timeout', 'soon'], token, /--timeout must be a positive duration such as 60, 30s or 1m30s, got soon$/m],
      [['--timeout', '0'], token, /--timeout must be a positive duration/],
      [['--max-wait', '-1m'], token, /--max-wait must be a duration such as 60, 30s or 1m30s, got -1m$/m],
      [[], { ...token, GANTRY_TIMEOUT: 'forever' }, /GANTRY_TIMEOUT must be a positive duration/],
      [[], { ...token, GANTRY_MAX_WAIT: '5 minutes' }, /GANTRY_MAX_WAIT must be a duration/],
    ];
    for (const [flags, env, message] of cases) {
      const run = await gantry(['platform', 'api', '/repos/gantry/demo', '--api-url', silent.url, ...flags], env);
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, message);
    }
    const storage = await gantry(['storage', 'about', '--base-url', silent.url, '--max-wait', 'x'], { STORAGE_TOKEN: 'ya29.waits-test-token' });
    assert.equal(storage.code, 2, storage.stderr);
    assert.equal(silent.connections(), before, 'nothing was sent');
  });

  describe('rate limits (the dev platform server, a budget of 1 request per scaled hour)', () => {
    let platform: PlatformServer;
    let token: string;
    afterEach(async () => platform?.stop());

    async function spend(scale: number): Promise<Record<string, string>> {
      platform = await startPlatformServer({ host: '127.0.0.1', port: 0, windowScale: scale, limits: { user: 1 } });
      token = platform.issueToken({ kind: 'personal', login: 'dev' });
      const env = { PLATFORM_API_URL: platform.url, GANTRY_PLATFORM_TOKEN: token };
      const first = await gantry(['platform', 'api', '/repos/gantry/demo'], env);
      assert.equal(first.code, 0, first.stderr);
      return env;
    }

    it('WAIT-SAID-AND-BOUNDED: a reset further away than --max-wait is exit 3 at once, saying when the limit resets and what allowed the wait', async () => {
      const env = await spend(0.1); // the hour is 6 minutes
      const run = await gantry(['platform', 'api', '/repos/gantry/demo', '--max-wait', '5s'], env);
      assert.equal(run.code, 3, run.stderr);
      assert.ok(run.ms < 10_000, `gave up after ${run.ms} ms`);
      assert.match(run.stderr, /more than the 5 s allowed \(--max-wait, GANTRY_MAX_WAIT\)/);
      assert.match(run.stderr, /the platform allows it again at \d{4}-\d\d-\d\dT/);
      const viaEnv = await gantry(['platform', 'api', '/repos/gantry/demo'], { ...env, GANTRY_MAX_WAIT: '0' });
      assert.equal(viaEnv.code, 3, viaEnv.stderr);
      assert.match(viaEnv.stderr, /allowed \(--max-wait, GANTRY_MAX_WAIT\)/);
    });

    it('WAIT-SAID-AND-BOUNDED: a reset within --max-wait is waited for, said first with the time it ends', async () => {
      const env = await spend(0.002); // the hour is 7.2 s
      const run = await gantry(['platform', 'api', '/repos/gantry/demo', '--max-wait', '1m'], env, { killAfterMs: 30_000 });
      assert.equal(run.code, 0, run.stderr);
      assert.match(
        run.stderr,
        new RegExp(`^rate limit for the core resource exhausted: waiting until ${clock.source} \\(--max-wait 60s to stop sooner\\)$`, 'm'),
      );
    });
  });
});
