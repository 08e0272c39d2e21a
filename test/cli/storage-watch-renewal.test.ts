// `gantry storage changes --watch` past its channel's expiry, against the embedded storage server with channels of a
// few seconds (STORAGE_CHANNEL_LIFETIME): a new channel takes over before the first ends and the first is stopped
// (the server no longer has it, before it would have expired), changes keep coming after the first channel's end,
// and none is printed twice. When no new channel can be registered, the command says so, keeps printing the changes
// by reading the log at each attempt, and says when it is watching again.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { harness, TOKEN, type Harness } from '../devserver/storage/helpers.js';
import { exited, spawnGantry } from './gantry-process.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Watching {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the match once the output (stdout or stderr) matches, fails after `ms`. */
  waitFor(stream: 'stdout' | 'stderr', pattern: RegExp, ms?: number): Promise<RegExpExecArray>;
}

function watchChanges(h: Harness, lifetime: string): Watching {
  const child = spawnGantry(['storage', 'changes', '--watch'], {
    STORAGE_BASE_URL: h.server.url,
    STORAGE_TOKEN: TOKEN,
    STORAGE_CHANNEL_LIFETIME: lifetime,
    GANTRY_LOG: 'info',
  });
  const text = { stdout: '', stderr: '' };
  child.stdout!.on('data', (chunk: Buffer) => (text.stdout += chunk));
  child.stderr!.on('data', (chunk: Buffer) => (text.stderr += chunk));
  return {
    child,
    stdout: () => text.stdout,
    stderr: () => text.stderr,
    async waitFor(stream, pattern, ms = 30_000) {
      const end = Date.now() + ms;
      for (;;) {
        const found = pattern.exec(text[stream]);
        if (found) return found;
        if (child.exitCode !== null) assert.fail(`gantry ended (${child.exitCode}) before ${stream} matched ${pattern}: ${text.stderr}`);
        if (Date.now() > end) assert.fail(`${stream} did not match ${pattern} within ${ms} ms: ${text[stream]}\nstderr: ${text.stderr}`);
        await sleep(50);
      }
    },
  };
}

describe('gantry storage changes --watch renews its channel (embedded storage server, channels of a few seconds)', function () {
  this.timeout(120_000);
  let h: Harness;
  let served: string[];
  let running: ChildProcess | undefined;

  beforeEach(async () => {
    served = [];
    h = await harness({ log: (line) => served.push(line) });
  });
  afterEach(async () => {
    if (running && running.exitCode === null) {
      running.kill('SIGKILL');
      await exited(running);
    }
    running = undefined;
    await h.close();
  });

  it('STO-CHANGES-WATCH STO-CHANNELS-STOP: a new channel takes over before the first expires, the first is stopped (the server no longer has it), changes are printed after its expiry, none twice; Ctrl-C stops the last channel (exit 0)', async () => {
    const w = watchChanges(h, '8s');
    running = w.child;
    const started = await w.waitFor('stderr', /^Watching changes: channel (\S+) until (\S+) \(a new channel takes over before then\)/m);
    const [first, ends] = [started[1]!, Date.parse(started[2]!)];
    assert.ok(ends - Date.now() <= 8000 && ends - Date.now() > 5000, `the channel was asked to live 8 s: ${started[2]}`);
    await h.api('POST', '/storage/v2/files', { title: 'before-renewal' });
    await w.waitFor('stdout', /\sbefore-renewal\s+changed$/m);

    const took = await w.waitFor(
      'stderr',
      new RegExp(`^Watching changes: channel (\\S+) until \\S+ took over from ${first} \\(its notifications are numbered from 1 again\\)$`, 'm'),
    );
    const second = took[1]!;
    // A change while both channels may still be alive: printed once all the same.
    await h.api('POST', '/storage/v2/files', { title: 'during-overlap' });
    for (let i = 0; i < 100 && !served.some((line) => line.startsWith('POST /storage/v2/channels/stop 204')); i += 1) await sleep(50);
    assert.equal((await h.api('POST', '/storage/v2/channels/stop', { id: first })).status, 404, 'the server no longer has the first channel');
    const stoppedAt = Date.now();
    assert.ok(stoppedAt < ends, 'stopped by the command, before it would have expired');
    await w.waitFor('stdout', /\sduring-overlap\s+changed$/m);

    await sleep(Math.max(0, ends - Date.now() + 500));
    await h.api('POST', '/storage/v2/files', { title: 'after-first-expired' });
    await w.waitFor('stdout', /\safter-first-expired\s+changed$/m);

    const ended = exited(w.child);
    w.child.kill('SIGINT');
    assert.equal(await ended, 0, w.stderr());
    const stdout = w.stdout();
    for (const title of ['before-renewal', 'during-overlap', 'after-first-expired']) {
      assert.equal(stdout.split('\n').filter((line) => new RegExp(`\\s${title}\\s+changed$`).test(line)).length, 1, `${title} printed once:\n${stdout}`);
    }
    assert.equal(stdout.split('\n').filter((line) => /^notification \d+: sync /.test(line)).length, 1, "one sync printed: a renewal's is not");
    assert.match(w.stderr(), /^Next: gantry storage changes --page-token \d+$/m);
    assert.doesNotMatch(w.stderr(), /^warn:/m, 'no warning');
    const sent = await h.server.notifications();
    assert.ok(
      sent.filter((d) => d.channelId === first).every((d) => Date.parse(d.at) <= stoppedAt),
      'the first channel sent nothing after it was stopped',
    );
    const last = /^channel (\S+) stopped$/m.exec(w.stderr());
    assert.ok(last, w.stderr());
    assert.notEqual(last[1], first);
    assert.equal((await h.api('POST', '/storage/v2/channels/stop', { id: last[1] })).status, 404, 'Ctrl-C stopped the last channel');
    assert.equal((await h.api('POST', '/storage/v2/channels/stop', { id: second })).status, 404);
  });

  it('STO-CHANGES-WATCH: no new channel can be registered — the command warns, says when the channel expired, prints the changes made meanwhile by reading the log, and says when it watches again', async () => {
    const w = watchChanges(h, '4s');
    running = w.child;
    const started = await w.waitFor('stderr', /^Watching changes: channel (\S+) until (\S+) /m);
    const first = started[1]!;
    await h.admin('POST', 'faults', { kind: 'status', status: 403, path: '/storage/v2/changes/watch', method: 'POST', times: 1000 });
    await w.waitFor(
      'stderr',
      new RegExp(`^warn: could not register a channel to take over from ${first} before it expires at \\S+ \\(.*403.*\\); trying again in \\d+ s$`, 'm'),
    );
    await w.waitFor(
      'stderr',
      new RegExp(
        `^warn: channel ${first} expired at \\S+ and no new one could be registered \\(.*403.*\\): the service announces nothing until one is, so the changes are read at each attempt \\(at least once a minute\\) meanwhile$`,
        'm',
      ),
    );
    await h.api('POST', '/storage/v2/files', { title: 'made-while-deaf' });
    await w.waitFor('stdout', /\smade-while-deaf\s+changed$/m);
    // stdout and stderr are two pipes: the warning written before the read may reach the test after the change does.
    await w.waitFor('stderr', /^warn: still no channel \(.*403.*\): reading the changes now, and trying to register one again in \d+ s$/m);
    await h.admin('DELETE', 'faults');
    const again = await w.waitFor('stderr', new RegExp(`^warn: watching again: channel (\\S+) until \\S+ took over from the expired ${first}$`, 'm'));
    await h.api('POST', '/storage/v2/files', { title: 'announced-again' });
    await w.waitFor('stdout', /\sannounced-again\s+changed$/m);
    const ended = exited(w.child);
    w.child.kill('SIGINT');
    assert.equal(await ended, 0, w.stderr());
    for (const title of ['made-while-deaf', 'announced-again']) {
      assert.equal(
        w
          .stdout()
          .split('\n')
          .filter((line) => new RegExp(`\\s${title}\\s+changed$`).test(line)).length,
        1,
        `${title} printed once`,
      );
    }
    const sent = await h.server.notifications();
    assert.ok(
      sent.some((d) => d.channelId === again[1] && d.state === 'change'),
      'the new channel announced the change',
    );
  });

  it('a channel lifetime that is no duration (STORAGE_CHANNEL_LIFETIME or --channel-lifetime), or --channel-lifetime without --watch, is exit 2 before anything is sent', async () => {
    const w = watchChanges(h, '10 minutes');
    running = w.child;
    assert.equal(await exited(w.child), 2);
    assert.match(w.stderr(), /STORAGE_CHANNEL_LIFETIME "?10 minutes"? is not a channel lifetime/);
    assert.match(w.stderr(), /90s.*10m, 2h, 7d/);
    const env = { STORAGE_BASE_URL: h.server.url, STORAGE_TOKEN: TOKEN };
    for (const [args, message] of [
      [['--watch', '--channel-lifetime', '8d'], /--channel-lifetime "?8d"? is not a channel lifetime/],
      [['--watch', '--channel-lifetime', '0s'], /--channel-lifetime "?0s"? is not a channel lifetime/],
      [['--channel-lifetime', '5m'], /--channel-lifetime goes with --watch/],
    ] as const) {
      const child = spawnGantry(['storage', 'changes', ...args], env);
      let stderr = '';
      child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk));
      assert.equal(await exited(child), 2, stderr);
      assert.match(stderr, message);
    }
    assert.deepEqual(
      served.filter((line) => !line.startsWith('storage API listening')),
      [],
      'nothing reached the server',
    );
  });
});
