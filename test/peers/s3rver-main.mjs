// The S3 test peer's own process (started by test/peers/s3.ts): s3rver on 127.0.0.1, port 0 (the kernel picks a
// free port), storing under the directory given as the only argument, logging nothing. Prints one JSON line,
// {"port": N}, once it listens. When its stdin closes it removes the directory and exits, so neither outlives the
// test process that started it (even one killed without running its exit handlers).
import { rmSync } from 'node:fs';
import S3rver from 's3rver';

const directory = process.argv[2];
if (!directory) {
  process.stderr.write('usage: s3rver-main.mjs <directory>\n');
  process.exit(2);
}

// The parent is gone (stdin closed): take the data folder with us, as the parent could not.
const orphaned = () => {
  rmSync(directory, { recursive: true, force: true });
  process.exit(0);
};
process.stdin.on('end', orphaned);
process.stdin.on('close', orphaned);
process.stdin.resume();

try {
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
  const { port } = await server.run();
  process.stdout.write(JSON.stringify({ port }) + '\n');
} catch (error) {
  process.stderr.write(`s3rver did not start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
}
