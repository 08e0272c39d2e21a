#!/usr/bin/env node
import { stdoutReaderGone } from './reader-gone.js';
import { run } from './program.js';

// Output that cannot be written ends the command quietly, never with a stack. A closed pipe (`gantry doctor | head -1`)
// is the reader having taken what it wanted: the rest is dropped and the command ends with its own exit code. Any
// other failure (a full disk: `gantry … > /dev/full`) is said in one line on stderr, and a command that had succeeded
// exits 2, since its output is lost. Writes to files and terminals are synchronous in Node, so their errors are thrown
// by write() itself rather than emitted: both paths are caught here, once, for every command.
const readerGone = new Set(['EPIPE', 'ERR_STREAM_DESTROYED']);
let lost: { stream: string; error: NodeJS.ErrnoException } | undefined;

function guard(stream: NodeJS.WriteStream, name: string): void {
  let broken = false;
  const fail = (error: NodeJS.ErrnoException) => {
    const first = !broken;
    broken = true;
    if (!readerGone.has(error.code ?? '') && name === 'stdout') lost ??= { stream: name, error };
    else if (first && name === 'stdout') stdoutReaderGone();
  };
  const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
  stream.write = ((...args: unknown[]) => {
    if (broken) return true;
    try {
      return write(...args);
    } catch (error) {
      fail(error as NodeJS.ErrnoException);
      return true;
    }
  }) as typeof stream.write;
  stream.on('error', fail);
}

guard(process.stdout, 'stdout');
guard(process.stderr, 'stderr');

const code = await run(process.argv);
// A stream's write error is emitted on a later tick: let it arrive before deciding.
await new Promise((resolve) => setImmediate(resolve));
if (lost) {
  const { code: errno, message } = lost.error;
  process.stderr.write(
    `error: the output could not be written to ${lost.stream}: ${errno ?? message}${errno === 'ENOSPC' ? ' (no space left on the device)' : ''}\n`,
  );
  process.exitCode = code === 0 ? 2 : code;
} else {
  process.exitCode = code;
}
