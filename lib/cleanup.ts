/**
 * Last-resort clean-up of what Gantry started or created — browsers and drivers (lib/browser, lib/automation), working
 * folders of downloads and installs (lib/sources) — for when the process ends before the normal clean-up: exit,
 * Ctrl-C (SIGINT), SIGTERM, SIGHUP. A root module, so that every area shares one set of handlers. Each clean-up must be synchronous (nothing async runs on 'exit').
 * The signal handlers exist only while something is registered, so the host's signal behaviour is otherwise untouched.
 */
const cleanups = new Set<() => void>();
const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

function runAll(): void {
  for (const cleanup of [...cleanups]) {
    cleanups.delete(cleanup);
    try {
      cleanup();
    } catch {
      // keep going: the other clean-ups still matter
    }
  }
}

/** Graceful shutdowns under way (`signalsHandledGracefully`): while any is, a signal leaves the clean-ups to 'exit'. */
let graceful = 0;

/**
 * Says that a signal now starts a graceful shutdown (`gantry hooks serve` finishing its running jobs): the clean-ups
 * then run when the process exits, not on the signal — killing a browser at once would fail the gate being finished.
 * Returns the function that takes it back.
 */
export function signalsHandledGracefully(): () => void {
  graceful += 1;
  let undone = false;
  return () => {
    if (undone) return;
    undone = true;
    graceful -= 1;
  };
}

function onSignal(signal: NodeJS.Signals): void {
  if (graceful > 0) return;
  runAll();
  uninstall();
  // If nobody else handles the signal, behave as if we had not been here: die by the signal.
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}

const handlers = new Map<NodeJS.Signals, () => void>(signals.map((signal) => [signal, () => onSignal(signal)]));

function install(): void {
  process.on('exit', runAll);
  for (const [signal, handler] of handlers) process.on(signal, handler);
}

function uninstall(): void {
  process.off('exit', runAll);
  for (const [signal, handler] of handlers) process.off(signal, handler);
}

/** Registers a synchronous clean-up; returns the function that unregisters it (call it once cleaned up normally). */
export function registerEmergencyCleanup(cleanup: () => void): () => void {
  if (cleanups.size === 0) install();
  cleanups.add(cleanup);
  return () => {
    if (!cleanups.delete(cleanup)) return;
    if (cleanups.size === 0) uninstall();
  };
}
