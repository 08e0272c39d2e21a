/**
 * A file that says which process is doing a piece of work, so that a second process does not do the same work at the
 * same time: created exclusively (`wx`), holding the process id, the host and since when; removed by its holder. A
 * holder that died (same host, process gone) leaves a stale file, which the next taker replaces.
 */
import { open, readFile, rm } from 'node:fs/promises';
import { hostname } from 'node:os';

export interface LockHolder {
  pid: number;
  host: string;
  since: string;
}

export interface ProcessLock {
  readonly path: string;
  /** Removes the file (idempotent). */
  release(): Promise<void>;
}

/** Whether the process `pid` runs on this machine (a process of another user counts as running). */
export function processRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function readHolder(path: string): Promise<LockHolder | undefined> {
  try {
    const held = JSON.parse(await readFile(path, 'utf8')) as Partial<LockHolder>;
    if (Number.isInteger(held.pid) && typeof held.host === 'string' && typeof held.since === 'string') return held as LockHolder;
  } catch {
    // unreadable or half-written: treated as stale below
  }
  return undefined;
}

/**
 * Takes the lock at `path`, or says who holds it. A file whose process is gone from this host, or that is not a lock
 * Gantry wrote, is stale and replaced; a holder on another host (a shared home folder) is taken at its word.
 */
export async function takeProcessLock(path: string): Promise<{ lock: ProcessLock } | { heldBy: LockHolder }> {
  const me: LockHolder = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
  for (let attempt = 0; ; attempt += 1) {
    try {
      return { lock: await create(path, me) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = await readHolder(path);
      if (holder && (holder.host !== me.host || processRunning(holder.pid))) return { heldBy: holder };
      // Another taker replaced the same stale file first.
      if (attempt > 0) throw error;
    }
    await rm(path, { force: true });
  }
}

async function create(path: string, me: LockHolder): Promise<ProcessLock> {
  const handle = await open(path, 'wx', 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(me)}\n`);
  } finally {
    await handle.close();
  }
  let released = false;
  return {
    path,
    release: async () => {
      if (released) return;
      released = true;
      const holder = await readHolder(path);
      if (holder?.pid === me.pid && holder.host === me.host) await rm(path, { force: true });
    },
  };
}
