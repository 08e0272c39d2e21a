// When the reader of stdout goes away (`gantry hooks serve | head -1`), main.ts drops what is still written; a command
// that runs until stopped registers here to stop as it would on Ctrl-C, instead of serving on with its output lost.
const listeners = new Set<() => void>();

/** Called once by main.ts's guard when stdout's reader is gone. */
export function stdoutReaderGone(): void {
  for (const listener of [...listeners]) {
    listeners.delete(listener);
    listener();
  }
}

/** `listener` runs when stdout's reader goes away; returns what unregisters it. */
export function onStdoutReaderGone(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
