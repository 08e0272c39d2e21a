// What the embedded platform API saw, on its own clock: every API request (not /_gantry/) with the time it arrived
// and the time it was answered, read from the server's `log` option — one line per request, written when the answer
// ends: "<METHOD> <path> <status> <ms>ms". The arrival is the end less the time the server took; both are measured by
// the server, so a client's waits are checked where the platform would see them.

export interface Arrival {
  method: string;
  path: string;
  status: number;
  /** When the server began handling the request (epoch ms, the server's clock). */
  at: number;
  /** When its answer ended. */
  end: number;
}

export interface ServerJournal {
  /** Pass as `startPlatformServer({ log })`. */
  log: (line: string) => void;
  entries: Arrival[];
  /** The entries for one method and path, in order of arrival. */
  of(method: string, path: string): Arrival[];
}

export function serverJournal(): ServerJournal {
  const entries: Arrival[] = [];
  return {
    entries,
    log: (line) => {
      const match = /^([A-Z]+) (\S+) (\d{3}) (\d+)ms$/.exec(line);
      if (!match) return;
      const end = Date.now();
      entries.push({ method: match[1]!, path: match[2]!, status: Number(match[3]), at: end - Number(match[4]), end });
    },
    of: (method, path) => entries.filter((e) => e.method === method && e.path === path).sort((a, b) => a.at - b.at),
  };
}

/** Resolves once `check` holds, polling every 5 ms; rejects after `timeoutMs`. */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'the condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
