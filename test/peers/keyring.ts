// A real Secret Service for tests: a private D-Bus session bus (dbus-daemon, its own config: one unix socket in a
// temporary folder, no service activation) and gnome-keyring-daemon's secrets component on it, with its keyrings in
// that folder (HOME, XDG_DATA_HOME, XDG_RUNTIME_DIR all point there, never at the user's own keyring). The login
// keyring is created and unlocked with a password on stdin, and becomes the default collection. Debian's dbus and
// gnome-keyring (scripts/system-packages.json, installed by `npm run setup`). Not a mock. A test that needs it fails —
// never skips — when it cannot start, with the command that installs what is missing.
//
// libdbus reads DBUS_SESSION_BUS_ADDRESS once per process, at the keyring binding's first use, and keeps that bus
// (or that failure) for the life of the process: tests that use the binding run it in a child process given
// `peer.env` (test/auth/store/helpers/store-child.ts), so no test depends on which one touched the binding first.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface KeyringPeer {
  /** The bus address (unix:path=…/bus,guid=…). */
  address: string;
  /** What a child process needs to use this keyring: DBUS_SESSION_BUS_ADDRESS, HOME, XDG_DATA_HOME, XDG_RUNTIME_DIR. */
  env: Record<string, string>;
  /** The keyring's password. */
  password: string;
  /** Restart gnome-keyring without unlocking: the login keyring (the default collection) is then locked. */
  lock(): Promise<void>;
  /** Restart gnome-keyring unlocked. */
  unlock(): Promise<void>;
  stop(): Promise<void>;
}

const installHint = 'run `npm run setup` (or `sudo apt-get install -y dbus gnome-keyring`)';

/** Throws a clear error when dbus-daemon, dbus-send or gnome-keyring-daemon is missing. */
export function requireKeyringTools(): void {
  for (const [command, args] of [
    ['dbus-daemon', ['--version']],
    ['dbus-send', ['--help']],
    ['gnome-keyring-daemon', ['--version']],
  ] as const) {
    const probe = spawnSync(command, [...args], { encoding: 'utf8' });
    if (probe.error) throw new Error(`keyring peer: ${command} is not installed (needed by the keyring tests of gantry auth) — ${installHint}`);
  }
}

function waitForLine(child: ChildProcess, what: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = '';
    let errors = '';
    const finish = (error?: Error, line?: string) => {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve(line!);
    };
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const end = output.indexOf('\n');
      if (end !== -1) finish(undefined, output.slice(0, end).trim());
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
      finish(new Error(`keyring peer: ${what} exited (${signal ?? `code ${code}`}) before it was ready: ${errors.slice(-2000)}`));
    const timer = setTimeout(() => finish(new Error(`keyring peer: ${what} was not ready within ${timeoutMs} ms: ${errors.slice(-2000)}`)), timeoutMs);
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      errors += chunk.toString();
    });
    child.once('exit', onExit);
    child.once('error', (error) => finish(new Error(`keyring peer: could not start ${what}: ${error.message}`)));
  });
}

async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
  await exited;
  clearTimeout(timer);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts the bus and the keyring daemon; resolves once the default collection answers (unlocked unless `locked`). */
export async function startKeyringPeer(options: { timeoutMs?: number } = {}): Promise<KeyringPeer> {
  requireKeyringTools();
  const timeoutMs = options.timeoutMs ?? 15_000;
  const dir = mkdtempSync(join(tmpdir(), 'gantry-keyring-'));
  const home = join(dir, 'home');
  const runtime = join(dir, 'runtime');
  mkdirSync(join(home, '.local', 'share'), { recursive: true, mode: 0o700 });
  mkdirSync(runtime, { mode: 0o700 });
  const config = join(dir, 'bus.conf');
  writeFileSync(
    config,
    `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=${join(dir, 'bus')}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`,
  );
  const bus = spawn('dbus-daemon', [`--config-file=${config}`, '--nofork', '--print-address=1'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let keyring: ChildProcess | undefined;
  const password = `peer-${process.pid}-${Date.now()}`;
  const cleanUp = async () => {
    await stopChild(keyring);
    await stopChild(bus);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const address = await waitForLine(bus, 'dbus-daemon', timeoutMs);
    const env = { DBUS_SESSION_BUS_ADDRESS: address, HOME: home, XDG_DATA_HOME: join(home, '.local', 'share'), XDG_RUNTIME_DIR: runtime };
    const childEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env };
    const dbusSend = (args: string[]) => spawnSync('dbus-send', ['--session', '--print-reply', ...args], { env: childEnv, encoding: 'utf8', timeout: 5000 });

    const startDaemon = async (unlock: boolean) => {
      await stopChild(keyring);
      keyring = spawn('gnome-keyring-daemon', ['--foreground', '--components=secrets', ...(unlock ? ['--unlock'] : [])], {
        env: childEnv,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let errors = '';
      keyring.stderr?.on('data', (chunk: Buffer) => {
        errors += chunk.toString();
      });
      keyring.stdout?.resume();
      keyring.stdin?.end(unlock ? password : '');
      const deadline = Date.now() + timeoutMs;
      // Ready when the daemon owns org.freedesktop.secrets and the default alias names the login collection.
      for (;;) {
        if (keyring.exitCode !== null || keyring.signalCode !== null)
          throw new Error(`keyring peer: gnome-keyring-daemon exited (${keyring.signalCode ?? `code ${keyring.exitCode}`}): ${errors.slice(-2000)}`);
        const alias = dbusSend(['--dest=org.freedesktop.secrets', '/org/freedesktop/secrets', 'org.freedesktop.Secret.Service.ReadAlias', 'string:default']);
        if (alias.status === 0 && /collection\/login/.test(alias.stdout)) {
          const locked = dbusSend([
            '--dest=org.freedesktop.secrets',
            '/org/freedesktop/secrets/collection/login',
            'org.freedesktop.DBus.Properties.Get',
            'string:org.freedesktop.Secret.Collection',
            'string:Locked',
          ]);
          if (locked.status === 0 && (unlock ? /boolean false/ : /boolean true/).test(locked.stdout)) return;
        }
        if (Date.now() > deadline)
          throw new Error(
            `keyring peer: the login collection was not ${unlock ? 'unlocked' : 'locked'} within ${timeoutMs} ms: ${alias.stderr || alias.stdout} ${errors.slice(-2000)}`,
          );
        await sleep(50);
      }
    };
    await startDaemon(true);
    return {
      address,
      env,
      password,
      lock: () => startDaemon(false),
      unlock: () => startDaemon(true),
      stop: cleanUp,
    };
  } catch (error) {
    await cleanUp();
    throw error;
  }
}
