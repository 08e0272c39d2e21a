#!/usr/bin/env node
import { run } from './program.js';

// A closed pipe (`gantry doctor | head -1`) ends quietly: the reader took what it wanted, so the rest of the output
// is dropped instead of crashing with an unhandled EPIPE and a stack. The command still ends with its own exit code.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
  });
}

process.exitCode = await run(process.argv);
