// A file's bytes as a response body. Read in 1 MiB pieces into two buffers used in turn, each reused once the socket
// has taken it: a 200 MB archive costs 200 thread-pool reads and no garbage, where a default read stream costs 3 200
// reads and as many fresh 64 KiB buffers (the dev server then used as much CPU per download as the client installing it).
import type { ServerResponse } from 'node:http';
import { open } from 'node:fs/promises';

const pieceBytes = 1024 * 1024;

export interface FileRange {
  /** The first byte sent. Default 0. */
  start?: number;
  /** The last byte sent (inclusive). Default: the file's last. */
  end?: number;
  /** A fault: send only this many bytes, then drop the connection (a body cut short). */
  cutAfter?: number;
}

/**
 * Writes a range of `path` to `res`, then ends it. The status and headers must already be written. Resolves once the
 * body is handed to the socket; rejects if the client goes away first or the file cannot be read.
 */
export async function sendFile(res: ServerResponse, path: string, range: FileRange = {}): Promise<void> {
  const file = await open(path, 'r');
  try {
    const start = range.start ?? 0;
    const end = range.end ?? (await file.stat()).size - 1;
    const last = range.cutAfter === undefined ? end : Math.min(end, start + range.cutAfter - 1);
    const wentAway = () => new Error('the client went away before the body was sent');
    const gone = new Promise<never>((_resolve, reject) => {
      res.once('close', () => {
        if (!res.writableFinished) reject(wentAway());
      });
    });
    gone.catch(() => undefined);
    // A small file (most modules are a few KiB) gets one buffer of its own size.
    const size = Math.max(1, Math.min(pieceBytes, last - start + 1));
    const buffers: Buffer[] = [];
    const taken: Array<Promise<void>> = [Promise.resolve(), Promise.resolve()];
    let position = start;
    for (let turn = 0; position <= last; turn ^= 1) {
      await Promise.race([taken[turn], gone]);
      const buffer = (buffers[turn] ??= Buffer.allocUnsafeSlow(size));
      const { bytesRead } = await file.read(buffer, 0, Math.min(pieceBytes, last - position + 1), position);
      if (bytesRead === 0) throw new Error(`${path} ended at byte ${position}, before byte ${end}`);
      if (res.destroyed) throw wentAway();
      position += bytesRead;
      taken[turn] = new Promise<void>((resolve, reject) => {
        res.write(buffer.subarray(0, bytesRead), (error) => (error ? reject(error) : resolve()));
      });
      taken[turn]!.catch(() => undefined);
    }
    await Promise.race([Promise.all(taken), gone]);
    if (last < end) res.destroy();
    else await new Promise<void>((resolve) => res.end(resolve));
  } finally {
    await file.close();
  }
}
