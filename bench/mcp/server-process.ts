// The two context servers of bench/mcp — one with authorization on (tokens checked against the authorization server),
// one the same but with `auth: false` — in a process of their own (the default), or in the bench's process
// (BENCH_MCP_SERVER=inprocess, to compare). Both serve the same tools with the same `env` (nothing: the registry is
// named in the tool's argument), a silent logger and loopback addresses.
// Child mode (run directly): the issuer and the introspection credentials arrive over IPC, never in argv; the servers'
// URLs go back the same way, and so does this process's CPU time whenever the bench asks for it.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startContextServer, type ContextServer } from '../../lib/mcp/index.js';
import { silentLogger } from '../../lib/log.js';

export interface ServerSetup {
  issuer: string;
  introspection: { clientId: string; clientSecret: string };
}

export interface ContextServers {
  on: { url: string; resource: string };
  off: { url: string };
  placement: 'child' | 'inprocess';
  /** CPU time (user + system, µs) of the process the servers run in; undefined when that is the bench's own. */
  cpuMicros(): Promise<number | undefined>;
  stop(): Promise<void>;
}

async function startBoth(setup: ServerSetup): Promise<ContextServer[]> {
  const on = await startContextServer({ authorizationServer: setup.issuer, introspection: setup.introspection, env: {}, logger: silentLogger });
  const off = await startContextServer({ auth: false, env: {}, logger: silentLogger });
  return [on, off];
}

export async function startContextServers(setup: ServerSetup, placement: 'child' | 'inprocess', nodeFlags: string[] = []): Promise<ContextServers> {
  if (placement === 'inprocess') {
    const [on, off] = await startBoth(setup);
    return {
      on: { url: on!.url, resource: on!.resource },
      off: { url: off!.url },
      placement,
      cpuMicros: async () => undefined,
      stop: async () => {
        await Promise.all([on!.stop(), off!.stop()]);
      },
    };
  }
  const child: ChildProcess = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', fileURLToPath(import.meta.url)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`the context-server process exited with ${code}`))));
  exited.catch(() => undefined);
  const next = <T>(type: string) =>
    Promise.race([
      exited,
      new Promise<T>((resolve) => {
        const listen = (message: { type: string } & T) => {
          if (message.type !== type) return;
          child.off('message', listen);
          resolve(message);
        };
        child.on('message', listen);
      }),
    ]);
  child.send({ type: 'setup', setup });
  const ready = await next<{ on: { url: string; resource: string }; off: { url: string } }>('ready');
  return {
    on: ready.on,
    off: ready.off,
    placement,
    async cpuMicros() {
      const answer = next<{ micros: number }>('cpu');
      child.send({ type: 'cpu' });
      return (await answer).micros;
    },
    async stop() {
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.send({ type: 'stop' });
      await gone;
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  let servers: ContextServer[] = [];
  process.on('message', (message: { type: string; setup?: ServerSetup }) => {
    if (message.type === 'setup') {
      void startBoth(message.setup!).then((started) => {
        servers = started;
        process.send!({ type: 'ready', on: { url: started[0]!.url, resource: started[0]!.resource }, off: { url: started[1]!.url } });
      });
    } else if (message.type === 'cpu') {
      const used = process.cpuUsage();
      process.send!({ type: 'cpu', micros: used.user + used.system });
    } else if (message.type === 'stop') {
      // A normal exit (not a signal), so --cpu-prof writes its profile.
      void Promise.all(servers.map((server) => server.stop())).then(() => process.exit(0));
    }
  });
}
