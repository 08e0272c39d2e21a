import { readdirSync, readFileSync } from 'node:fs';

/**
 * Kills (SIGKILL) every other process whose command line names `marker` — a browser's profile folder, made by mkdtemp
 * for that browser alone — whatever its process group: the second net after killing the group, for a browser process
 * that is no longer in the group it was started in. Linux only (it reads /proc); elsewhere, and where /proc cannot be
 * read, it does nothing, as it does for a marker under 8 characters (an empty one would name every process).
 * Synchronous, for exit and signal handlers. Returns how many processes it signalled.
 */
export function killProcessesNaming(marker: string): number {
  if (process.platform !== 'linux' || marker.length < 8) return 0;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return 0;
  }
  let killed = 0;
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) continue;
    try {
      // Chromium's helpers rewrite their command line into one string; the marker is found either way.
      if (!readFileSync(`/proc/${entry}/cmdline`, 'latin1').includes(marker)) continue;
      process.kill(pid, 'SIGKILL');
      killed += 1;
    } catch {
      // gone meanwhile, or not ours to signal
    }
  }
  return killed;
}
