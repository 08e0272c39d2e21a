import { rmSync } from 'node:fs';
import { registerEmergencyCleanup } from '../cleanup.js';

/**
 * Removes `folder` (a working folder of a fetch or an install) if the process is stopped — Ctrl-C, SIGTERM, SIGHUP,
 * exit — before the returned function is called; call it once the folder is renamed into place or removed. What the
 * handlers leave, the next run's sweep of its own leftovers removes.
 */
export function removeOnInterrupt(folder: string): () => void {
  return registerEmergencyCleanup(() => rmSync(folder, { recursive: true, force: true }));
}
