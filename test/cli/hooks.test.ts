// `gantry hooks serve` and `verify` in processes of their own, for what a new user met: a serve with the app but no
// gantry.hooks.json still answers a protection request (rejected with the reason, the decision printed); a wrong app
// id stops it at start; a --host that is no local address is bad input; a secret given to --secret-env by mistake is
// never echoed.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { startPlatformServer, type PlatformServer } from '../../devserver/platform/index.js';
import { sign } from '../../lib/webhooks/verify.js';
import { exited, spawnGantry } from './gantry-process.js';

const SECRET = 'hooks cli secret';

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

async function gantry(args: string[], env: Record<string, string>, cwd?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnGantry(args, env, cwd);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  return { code: await exited(child), stdout, stderr };
}

describe('gantry hooks serve and verify (processes of their own)', function () {
  this.timeout(180_000);
  let platform: PlatformServer;
  let folder: string;
  let keyFile: string;
  let port: number;

  before(async () => {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    folder = await mkdtemp(path.join(tmpdir(), 'gantry-hooks-cli-'));
    keyFile = path.join(folder, 'app.pem');
    await writeFile(keyFile, privateKey.export({ type: 'pkcs1', format: 'pem' }), { mode: 0o600 });
    port = await freePort();
    platform = await startPlatformServer({
      apps: [{ id: 21, publicKey, installations: [{ id: 2, account: 'gantry' }], webhook: { url: `http://127.0.0.1:${port}/hooks`, secret: SECRET } }],
      environments: [{ repository: 'gantry/demo', name: 'production', protectionRules: [{ appId: 21 }] }],
    });
  });
  after(async () => {
    await platform?.stop();
    await rm(folder, { recursive: true, force: true });
  });

  it('HOOK-EV-DEPLOYMENT-PROTECTION-RULE: with the app and no gantry.hooks.json, a protection request is rejected with the reason, never left waiting; the decision is a line on stdout', async () => {
    const child = spawnGantry(
      ['hooks', 'serve', '--port', String(port)],
      { GANTRY_WEBHOOK_SECRET: SECRET, GANTRY_APP_ID: '21', GANTRY_APP_PRIVATE_KEY_FILE: keyFile, PLATFORM_API_URL: platform.url },
      folder,
    );
    let stdout = '';
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
    try {
      const ready = Date.now() + 90_000;
      while (!/receiving webhooks on http:\/\/127\.0\.0\.1:\d+\/hooks/.test(stdout)) {
        if (child.exitCode !== null || Date.now() > ready) throw new Error(`serve did not start: ${stdout}`);
        await delay(100);
      }
      const token = platform.issueToken({ kind: 'personal', login: 'deployer' });
      const created = await fetch(`${platform.url}/repos/gantry/demo/deployments`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
        body: JSON.stringify({ ref: 'a'.repeat(40), environment: 'production', required_contexts: [] }),
      });
      const { id } = (await created.json()) as { id: number };
      let protection: { state: string; decision?: { comment?: string } | null } = { state: 'waiting' };
      const deadline = Date.now() + 60_000;
      while (protection.state === 'waiting' && Date.now() < deadline) {
        await delay(200);
        protection = (await (await fetch(`${platform.url}/_gantry/deployments/${id}`)).json()) as typeof protection;
      }
      assert.equal(protection.state, 'rejected');
      assert.match(protection.decision?.comment ?? '', /no gate for the environment `production` in gantry\.hooks\.json \(none found\)/);
      assert.ok(!(protection.decision?.comment ?? '').includes(folder), 'no server folder in a comment the platform shows');
      const decided = Date.now() + 10_000;
      while (!/deployment to production rejected/.test(stdout) && Date.now() < decided) await delay(100);
      assert.match(stdout, /deployment to production rejected — delivery [0-9a-f-]{36}/);
    } finally {
      child.kill('SIGTERM');
      assert.equal(await exited(child), 0, 'SIGTERM ends it with 0');
    }
  });

  it('a wrong app id stops serve at start (exit 1, GET /app refused), before any deployment can wait on it', async () => {
    const result = await gantry(
      ['hooks', 'serve', '--port', '0'],
      { GANTRY_WEBHOOK_SECRET: SECRET, GANTRY_APP_ID: '99', GANTRY_APP_PRIVATE_KEY_FILE: keyFile, PLATFORM_API_URL: platform.url },
      folder,
    );
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /GET .*\/app answered 401/);
    assert.match(result.stderr, /app id \(99\)/);
    assert.doesNotMatch(result.stdout, /receiving webhooks/);
  });

  it('a --host that is no address of this machine is exit 2; a secret given to --secret-env is never echoed', async () => {
    const host = await gantry(['hooks', 'serve', '--port', '0', '--host', '10.255.255.1'], { GANTRY_WEBHOOK_SECRET: SECRET });
    assert.equal(host.code, 2, host.stderr);
    assert.match(host.stderr, /--host 10\.255\.255\.1 is no address of this machine/);
    const lookalike = 'e9b83751868cb78de497af7a375e31b622f094f0';
    const delivery = path.join(folder, 'delivery.http');
    await writeFile(delivery, 'X-Platform-Event: ping\n\n{}');
    for (const value of [lookalike, `9${lookalike}`]) {
      const result = await gantry(['hooks', 'verify', '--secret-env', value, delivery], {});
      assert.equal(result.code, 2, result.stderr);
      assert.ok(!result.stderr.includes(lookalike), `the value is not echoed: ${result.stderr}`);
    }
  });

  it("DOCS-AGREE-SERVERS: serve reads gantry.hooks.json from the current folder, or --config's path; one that gates environments without the app is refused at start, exit 2", async () => {
    const gating = await mkdtemp(path.join(tmpdir(), 'gantry-hooks-gating-'));
    try {
      await writeFile(
        path.join(gating, 'gantry.hooks.json'),
        JSON.stringify({ environments: { production: { urls: ['https://example.com/'], min: { performance: 0.9 } } } }),
      );
      const env = { GANTRY_WEBHOOK_SECRET: SECRET };
      const here = await gantry(['hooks', 'serve', '--port', '0'], env, gating);
      assert.equal(here.code, 2, here.stderr);
      assert.match(
        here.stderr,
        /gantry\.hooks\.json gates environments, and the answers must come from the app: set GANTRY_APP_ID and GANTRY_APP_PRIVATE_KEY_FILE/,
      );
      assert.doesNotMatch(here.stdout, /receiving webhooks/);
      // The same file named by --config from another folder.
      const named = await gantry(['hooks', 'serve', '--port', '0', '--config', path.join(gating, 'gantry.hooks.json')], env, folder);
      assert.equal(named.code, 2, named.stderr);
      assert.match(named.stderr, /gates environments/);
      // A folder without the file: it starts, gating nothing.
      const child = spawnGantry(['hooks', 'serve', '--port', '0'], env, folder);
      let stdout = '';
      child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
      for (let waited = 0; !/receiving webhooks/.test(stdout) && child.exitCode === null && waited < 30_000; waited += 100) await delay(100);
      assert.match(stdout, /receiving webhooks on http:\/\/127\.0\.0\.1:\d+\/hooks .*no environments gated/);
      child.kill('SIGTERM');
      await exited(child);
    } finally {
      await rm(gating, { recursive: true, force: true });
    }
  });

  it('DOCS-AGREE-SERVERS: hooks verify takes a signed body only when hooks serve would — a body that is not UTF-8 is exit 1 there and 400 here', async () => {
    const cases: Array<[string, string, Buffer]> = [
      ['a JSON body that is not UTF-8', 'application/json', Buffer.concat([Buffer.from('{"zen":"'), Buffer.from([0xff, 0xfe]), Buffer.from('","hook_id":1}')])],
      [
        'a form body with bytes that are not ASCII',
        'application/x-www-form-urlencoded',
        Buffer.concat([Buffer.from('payload=%7B%7D&x='), Buffer.from([0xe9])]),
      ],
      ['a form payload that is not percent-encoded UTF-8', 'application/x-www-form-urlencoded', Buffer.from('payload=%7B%22zen%22%3A%22%FF%22%7D')],
      ['a JSON array', 'application/json', Buffer.from('[1]')],
      ['a ping', 'application/json', Buffer.from('{"zen":"Keep it logically awesome.","hook_id":1,"hook":{"id":1,"type":"App"}}')],
    ];
    const child = spawnGantry(['hooks', 'serve', '--port', '0'], { GANTRY_WEBHOOK_SECRET: SECRET }, folder);
    let stdout = '';
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
    try {
      for (let waited = 0; !/receiving webhooks on/.test(stdout) && child.exitCode === null && waited < 30_000; waited += 100) await delay(100);
      const url = /receiving webhooks on (http:\/\/\S+)/.exec(stdout)![1]!;
      for (const [index, [what, type, body]] of cases.entries()) {
        const headers = {
          'content-type': type,
          'user-agent': 'Platform-Hookshot/abc123',
          'x-platform-event': 'ping',
          'x-platform-delivery': `00000000-0000-4000-8000-00000000000${index}`,
          'x-platform-hook-id': '1',
          'x-hub-signature-256': sign(SECRET, body),
        };
        const served = await fetch(url, { method: 'POST', headers, body });
        const answer = (await served.json()) as { error?: string; reason?: string };
        const saved = path.join(folder, `delivery-${index}.http`);
        await writeFile(
          saved,
          Buffer.concat([
            Buffer.from(
              `POST /hooks HTTP/1.1\r\n${Object.entries(headers)
                .map(([name, value]) => `${name}: ${value}`)
                .join('\r\n')}\r\ncontent-length: ${body.length}\r\n\r\n`,
            ),
            body,
          ]),
        );
        const verified = await gantry(['hooks', 'verify', '--secret-env', 'GANTRY_WEBHOOK_SECRET', saved], { GANTRY_WEBHOOK_SECRET: SECRET });
        if (served.status === 200) {
          assert.equal(what, 'a ping');
          assert.equal(verified.code, 0, `${what}: ${verified.stderr}`);
          assert.match(verified.stdout, /^valid sha256 signature on ping delivery/);
        } else {
          assert.equal(served.status, 400, `${what}: serve answered ${served.status}`);
          assert.equal(verified.code, 1, `${what}: verify exited ${verified.code}: ${verified.stderr}`);
          assert.ok(
            verified.stderr.includes(`the signature is valid but the payload is not: ${answer.error}`),
            `${what}: the same reason as serve's (${answer.error}): ${verified.stderr}`,
          );
        }
      }
    } finally {
      child.kill('SIGTERM');
      await exited(child);
    }
  });
});
