// Where the dev servers may listen: loopback only (they hand out a root token over plain http), and an address or a
// port that cannot be had is bad input (exit 2) said plainly — not a raw EADDRINUSE or ENOTFOUND as an outage (3).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { spawnGantry } from './gantry-process.js';

function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawnGantry(args, env);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    // A server that did start would run until stopped: that is the failure this test is about.
    const timer = setTimeout(() => child.kill('SIGTERM'), 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('gantry dev: loopback only, and addresses or ports that cannot be had are usage errors', function () {
  this.timeout(90_000);
  let holder: Server;
  let taken: number;
  before(async () => {
    holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    taken = (holder.address() as { port: number }).port;
  });
  after(() => holder.close());

  it('a non-loopback --host is refused before anything listens (exit 2), for dev and each server alone', async () => {
    for (const args of [
      ['dev', '--host', '0.0.0.0'],
      ['dev', 'registry', '--host', '0.0.0.0'],
      ['dev', 'secrets', '--host', '192.0.2.1'],
      ['dev', 'registry', '--host', 'example.com'],
      ['dev', 'platform', '--host', '0.0.0.0'],
      ['dev', '--host', '0.0.0.0', 'secrets'],
    ]) {
      const result = await run(args);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, /^error: --host \S+ is not a loopback address/m);
      assert.match(result.stderr, /GANTRY_DEV_ALLOW_REMOTE=1/);
      assert.equal(result.stdout, '', 'no server was started');
    }
  });

  it('a --port that is taken is exit 2 naming the port and the flag, for each server alone', async () => {
    for (const server of ['registry', 'secrets', 'platform']) {
      const result = await run(['dev', server, '--port', String(taken)]);
      assert.equal(result.code, 2, `${server}: ${result.stderr}`);
      assert.match(result.stderr, new RegExp(`^error: port ${taken} on 127\\.0\\.0\\.1 is in use \\(--port\\)$`, 'm'));
      assert.doesNotMatch(result.stderr, /EADDRINUSE|\n\s+at /);
    }
  });
});
