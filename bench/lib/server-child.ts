// An embedded server in a process of its own, so a benchmark measures the client's event loop only: the parent
// starts the module as a child and reads one JSON line of what the server says about itself; the child (the module
// run directly) starts the server, prints that line, and stops the server on SIGTERM.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface ServerChild<Info> {
  info: Info;
  /** SIGTERM, and the child's exit. */
  stop(): Promise<void>;
  /** The CPU time (user and system, ms) the server's process has used so far: on one machine it competes with the client. */
  cpuMs(): number;
}

let ticksPerSecond: number | undefined; // asked of getconf on the first cpuMs(), not on import by every benchmark

/** Runs `moduleUrl` (its `import.meta.url`) under tsx with `args`; `what` names the server in a failure. */
export async function startServerChild<Info>(moduleUrl: string, args: string[], what: string): Promise<ServerChild<Info>> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(moduleUrl), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the ${what} process exited with ${code}`)));
  });
  return {
    info: JSON.parse(line) as Info,
    cpuMs() {
      // /proc/<pid>/stat: the fields after the command's closing parenthesis; utime and stime are the 12th and 13th.
      const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticksPerSecond ??= Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
      return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
    },
    async stop() {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

/** Whether `moduleUrl` is the module node was asked to run (child mode). */
export const runDirectly = (moduleUrl: string): boolean => process.argv[1] === fileURLToPath(moduleUrl);

/** Child mode: start the server, print `info` of it as one JSON line on stdout, stop it on SIGTERM. */
export async function serveAsChild<Server extends { stop(): Promise<void> }>(start: () => Promise<Server>, info: (server: Server) => unknown): Promise<void> {
  const server = await start();
  process.stdout.write(`${JSON.stringify(info(server))}\n`);
  process.on('SIGTERM', () => {
    void server.stop().then(() => process.exit(0));
  });
}
