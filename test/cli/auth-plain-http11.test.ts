// `gantry auth login` and `logout` (the built command) against a plain HTTP/1.1 authorization server on Python's
// http.server (test/fixtures/http11-authorization-server.py): one that closes a connection after a request saying
// `Connection: close` without echoing it, and one that closes every connection right after answering. Both revokes of
// a logout go through, the login is removed, exit 0 — no request is sent on a connection the server has closed.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../../dist/lib/cli/main.js', import.meta.url));
const script = fileURLToPath(new URL('../fixtures/http11-authorization-server.py', import.meta.url));

interface Seen {
  method: string;
  path: string;
  connectionHeader: string | null;
  grantType: string | null;
  token: string | null;
  connection: number;
}

interface PythonServer {
  url: string;
  seen: Seen[];
  stop(): Promise<void>;
}

/** Starts the Python peer and reads the request lines it prints. */
function startPython(args: string[]): Promise<PythonServer> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn('python3', [script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    const seen: Seen[] = [];
    let pending = '';
    child.on('error', reject);
    child.stdout!.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      let newline: number;
      while ((newline = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        const listening = /^listening (\d+)$/.exec(line);
        if (listening) {
          resolve({
            url: `http://127.0.0.1:${listening[1]}`,
            seen,
            stop: () =>
              new Promise((done) => {
                child.once('close', () => done());
                child.kill('SIGTERM');
              }),
          });
        } else seen.push(JSON.parse(line) as Seen);
      }
    });
  });
}

function gantry(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('gantry auth against a plain HTTP/1.1 server (Python http.server)', function () {
  this.timeout(60_000);

  for (const [name, args] of [
    ['closes when asked, without echoing Connection: close', []],
    ['closes every connection right after answering', ['--close-after-answer']],
  ] as const) {
    it(`HTTP-CONN-CLOSE-POLICY: login, then logout revokes both tokens, deletes the login and exits 0 — a server that ${name}`, async () => {
      const server = await startPython([...args]);
      const configDir = await mkdtemp(join(tmpdir(), 'gantry-auth-http11-'));
      try {
        const env: NodeJS.ProcessEnv = {
          ...process.env,
          GANTRY_CONFIG_DIR: configDir,
          GANTRY_AUTH_URL: server.url,
          GANTRY_OAUTH_CLIENT_ID: 'plain-client',
          GANTRY_OAUTH_CLIENT_SECRET: 'plain-secret',
        };
        delete env.DBUS_SESSION_BUS_ADDRESS;
        delete env.SECRETS_ADDR;
        const login = await gantry(['auth', 'login', '--json', '--store', 'file', '--scope', 'openid,email'], env);
        assert.equal(login.code, 0, login.stderr);
        assert.equal((JSON.parse(login.stdout) as { store: { kind: string } }).store.kind, 'file');
        const logins = async () => (await readdir(join(configDir, 'auth'))).filter((name) => name.endsWith('.json') && name !== 'profiles.json');
        assert.equal((await logins()).length, 1, 'the login is kept in a file');
        const logout = await gantry(['auth', 'logout'], env);
        assert.equal(logout.code, 0, logout.stderr);
        assert.match(logout.stdout, /revoked at the server and deleted/);
        const revokes = server.seen.filter((request) => request.path === '/revoke');
        assert.deepEqual(
          revokes.map((request) => request.token).sort(),
          ['1//refresh-1', 'ya29.access-1'],
          'the access token and the refresh token were both revoked',
        );
        assert.ok(
          server.seen.every((request) => request.connectionHeader !== 'close'),
          'the auth requests leave the connection to the core',
        );
        const status = await gantry(['auth', 'status'], env);
        assert.equal(status.code, 1, 'the login is gone');
        assert.deepEqual(await logins(), [], 'the login file is deleted');
      } finally {
        await server.stop();
        await rm(configDir, { recursive: true, force: true });
      }
    });
  }
});
