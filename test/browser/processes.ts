// Chromium's processes as /proc shows them, for tests that check how a browser was started and that it went away.
import { readdirSync, readFileSync } from 'node:fs';

/** Whether `pid`'s chain of parents (from /proc/<pid>/stat) reaches `ancestor`. */
export function descendsFrom(pid: number, ancestor: number): boolean {
  for (let current = pid, hops = 0; current > 1 && hops < 64; hops++) {
    if (current === ancestor) return true;
    try {
      const stat = readFileSync(`/proc/${current}/stat`, 'utf8');
      current = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      return false;
    }
  }
  return false;
}

/**
 * The processes whose command line mentions `text` (Chromium and its children carry the profile path), with that
 * command line. Chromium's helpers rewrite their process title, so a line is one space-separated string, NULs or not.
 */
export function commandLinesMentioning(text: string): Array<{ pid: number; line: string }> {
  const found: Array<{ pid: number; line: string }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const line = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
      if (line.includes(text)) found.push({ pid: Number(entry), line });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** The processes whose command line mentions `text`. */
export function processesMentioning(text: string): number[] {
  return commandLinesMentioning(text).map(({ pid }) => pid);
}

/** The names a Chromium command line switches off with its (last) --disable-features. */
export function disabledFeaturesOf(line: string): string[] {
  const all = [...line.matchAll(/--disable-features=(\S+)/g)];
  return all.at(-1)?.[1]?.split(',') ?? [];
}
