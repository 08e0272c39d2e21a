// When the reader of stdout goes away (`gantry hooks serve | head -1`), main.ts drops what is still written; a command
// that runs until stopped registers here to stop as it would on Ctrl-C, instead of serving on with its output lost.
//
// A write that fails with EPIPE tells (main.ts's guard calls stdoutReaderGone), but a server prints its address and
// then is silent: it would never write again, so never learn. While something is registered, stdout is watched without
// writing a byte — only when it is a pipe or a socket (a terminal hangs up with SIGHUP; a file or /dev/null has no
// reader to lose):
// - a pipe: Node cannot poll a pipe's write end (libuv refuses to read a write-only pipe, and a second handle on fd 1
//   would share the first one's watcher). The kernel's answer — the write end polls POLLERR once no reader is left —
//   is read by GNU tail (coreutils ≥ 8.28), which watches its stdout for exactly that while following a file: a
//   `tail -f /dev/null` sharing our stdout dies of SIGPIPE the moment the last reader closes, having written nothing.
//   `--pid` ends it within a second should this process die without its 'exit' handler; a tail without those
//   features (BusyBox, BSD) exits at once with a usage error, and only a write then tells;
// - a socket (Node's `spawn` with stdio 'pipe' is a socketpair): a write of zero bytes sends nothing to a stream
//   socket, and fails with EPIPE once the peer has closed; asked four times a second.
import { spawn, type ChildProcess } from 'node:child_process';
import { fstatSync, writeSync } from 'node:fs';

const listeners = new Set<() => void>();
let gone = false;
let stopWatching: (() => void) | undefined;

/** Called once by main.ts's guard, or by the watch, when stdout's reader is gone. */
export function stdoutReaderGone(): void {
  gone = true;
  unwatch();
  for (const listener of [...listeners]) {
    listeners.delete(listener);
    listener();
  }
}

/** `listener` runs when stdout's reader goes away (at once if it already has); returns what unregisters it. */
export function onStdoutReaderGone(listener: () => void): () => void {
  if (gone) {
    queueMicrotask(listener);
    return () => undefined;
  }
  listeners.add(listener);
  stopWatching ??= watchStdout();
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0) unwatch();
  };
}

function unwatch(): void {
  const stop = stopWatching;
  stopWatching = undefined;
  stop?.();
}

/** How often a socket is asked whether its peer is still there. */
const SOCKET_PROBE_MS = 250;

/** Starts watching fd 1 for its reader going away; returns what stops the watch. */
function watchStdout(): () => void {
  let kind: 'pipe' | 'socket' | undefined;
  try {
    const stat = fstatSync(1);
    kind = stat.isFIFO() ? 'pipe' : stat.isSocket() ? 'socket' : undefined;
  } catch {
    kind = undefined;
  }
  if (kind === 'pipe') return watchPipe();
  if (kind === 'socket') return watchSocket();
  return () => undefined;
}

function watchPipe(): () => void {
  let child: ChildProcess | undefined;
  try {
    child = spawn('tail', ['-f', `--pid=${process.pid}`, '/dev/null'], { stdio: ['ignore', 1, 'ignore'] });
  } catch {
    return () => undefined;
  }
  const watcher = child;
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    process.off('exit', stop);
    // The watcher holds the pipe's write end too: its reader sees the end of the output only once it is gone.
    if (watcher.exitCode === null && watcher.signalCode === null) watcher.kill('SIGKILL');
  };
  watcher.on('error', () => undefined); // no tail on PATH: only a write tells
  watcher.on('exit', (_code, signal) => {
    if (stopped) return;
    stopped = true;
    process.off('exit', stop);
    if (signal === 'SIGPIPE') stdoutReaderGone();
  });
  watcher.unref();
  process.on('exit', stop);
  return stop;
}

function watchSocket(): () => void {
  const empty = Buffer.alloc(0);
  const timer = setInterval(() => {
    try {
      writeSync(1, empty);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') return;
      clearInterval(timer);
      if (code === 'EPIPE' || code === 'ECONNRESET' || code === 'ENOTCONN') stdoutReaderGone();
    }
  }, SOCKET_PROBE_MS);
  timer.unref();
  return () => clearInterval(timer);
}
