/**
 * Removal of the working folders of fetches still running when the process is stopped: Ctrl-C (SIGINT), SIGTERM,
 * SIGHUP, or exit. Synchronous, since nothing asynchronous runs then. The handlers are installed only while a folder
 * is registered, so the host's own signal behaviour is otherwise untouched; a signal nobody else handles still ends
 * the process by that signal. (lib/browser/cleanup.ts does the same for browsers; areas do not import each other.)
 */
import { rmSync } from 'node:fs';

const folders = new Set<string>();
const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

function removeAll(): void {
  for (const folder of [...folders]) {
    folders.delete(folder);
    try {
      rmSync(folder, { recursive: true, force: true });
    } catch {
      // keep going: the next run's sweep removes what is left
    }
  }
}

function onSignal(signal: NodeJS.Signals): void {
  removeAll();
  uninstall();
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}

const handlers = new Map<NodeJS.Signals, () => void>(signals.map((signal) => [signal, () => onSignal(signal)]));

function install(): void {
  process.on('exit', removeAll);
  for (const [signal, handler] of handlers) process.on(signal, handler);
}

function uninstall(): void {
  process.off('exit', removeAll);
  for (const [signal, handler] of handlers) process.off(signal, handler);
}

/** Removes `folder` if the process is stopped before the returned function is called (call it once cleaned up). */
export function removeOnInterrupt(folder: string): () => void {
  if (folders.size === 0) install();
  folders.add(folder);
  return () => {
    if (!folders.delete(folder)) return;
    if (folders.size === 0) uninstall();
  };
}
