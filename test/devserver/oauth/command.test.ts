// `gantry dev oauth` in its own process, and the starter `gantry dev` uses.
import assert from 'node:assert/strict';
import net from 'node:net';
import { devServers } from '../../../devserver/index.js';
import { DEV_OAUTH_PORT, startDevOAuth } from '../../../devserver/oauth/index.js';
import { exited, spawnGantry, startGantry, stopGantry } from '../../cli/gantry-process.js';
import { form, login, requestCode } from './helpers.js';

interface Info {
  url: string;
  dialect: string;
  clientId: string;
  clientSecret: string;
  env: Record<string, string>;
}

async function startCli(args: string[], env: Record<string, string> = {}) {
  return startGantry(
    ['--json', 'dev', 'oauth', ...args],
    (stdout) => {
      try {
        return JSON.parse(stdout) as Info;
      } catch {
        return undefined;
      }
    },
    env,
  );
}

async function failure(args: string[], env: Record<string, string> = {}, command = ['dev', 'oauth']): Promise<{ code: number | null; stderr: string }> {
  const child = spawnGantry([...command, ...args], env);
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  return { code: await exited(child), stderr };
}

describe('devserver/oauth: gantry dev oauth and the gantry dev starter', function () {
  this.timeout(60_000);

  it('is listed for gantry dev; a taken port 5762 falls back; one limited-input client; prints GANTRY_AUTH_URL, the client id and secret, GANTRY_API_URL, GANTRY_MCP_AUTHORIZATION_SERVER; GANTRY_DEV_OAUTH_INTERVAL sets the interval', async () => {
    assert.ok(devServers.some((s) => s.name === 'oauth'));
    const blocker = net.createServer();
    const blocked = await new Promise<boolean>((resolve) => {
      blocker.once('error', () => resolve(false));
      blocker.listen(DEV_OAUTH_PORT, '127.0.0.1', () => resolve(true));
    });
    const server = await startDevOAuth({ host: '127.0.0.1' }, { GANTRY_DEV_OAUTH_INTERVAL: '1' });
    try {
      if (blocked) assert.notEqual(new URL(server.url).port, String(DEV_OAUTH_PORT));
      assert.equal(server.env!.GANTRY_AUTH_URL, server.url);
      assert.equal(server.env!.GANTRY_API_URL, server.url);
      assert.equal(server.env!.GANTRY_MCP_AUTHORIZATION_SERVER, server.url);
      const client = { id: server.env!.GANTRY_OAUTH_CLIENT_ID!, secret: server.env!.GANTRY_OAUTH_CLIENT_SECRET! };
      assert.equal((await requestCode(server.url, client, 'email')).interval, 1);
      assert.equal((await login(server.url, client, 'email')).token_type, 'Bearer');
    } finally {
      await server.stop();
      blocker.close();
    }
    await assert.rejects(startDevOAuth({ host: '127.0.0.1' }, { GANTRY_DEV_OAUTH_PORT: '0', GANTRY_DEV_OAUTH_INTERVAL: 'soon' }), /GANTRY_DEV_OAUTH_INTERVAL/);
  });

  it('gantry dev oauth --dialect rfc8628 --interval 2 --expires-in 60 --code-quota 1/60s serves that, with the client it prints', async () => {
    const { child, value: info } = await startCli([
      '--port',
      '0',
      '--dialect',
      'rfc8628',
      '--interval',
      '2',
      '--expires-in',
      '60',
      '--code-quota',
      '1/60s',
      '--user-code-case',
      'mixed',
      '--client-id',
      'cli-client',
      '--client-secret',
      'cli-secret',
    ]);
    try {
      assert.equal(info.dialect, 'rfc8628');
      assert.deepEqual([info.clientId, info.clientSecret, info.env.GANTRY_AUTH_URL], ['cli-client', 'cli-secret', info.url]);
      const code = await requestCode(info.url, { id: 'cli-client', secret: 'cli-secret' }, 'email');
      assert.deepEqual([code.interval, code.expires_in, typeof code.verification_uri], [2, 60, 'string']);
      const second = await form(`${info.url}/device/code`, { client_id: 'cli-client', scope: 'email' });
      assert.deepEqual(
        [second.status, second.body.error, second.headers.get('retry-after') !== null],
        [429, 'rate_limit_exceeded', true],
        "RFC 6749's shape in the rfc8628 dialect",
      );
    } finally {
      await stopGantry(child);
    }
  });

  it('bad values exit 2 with a clear message before listening', async () => {
    for (const [args, message] of [
      [['--dialect', 'github'], /--dialect must be google or rfc8628/],
      [['--interval', '-1'], /--interval must be whole seconds/],
      [['--expires-in', '0'], /--expires-in must be whole seconds/],
      [['--code-quota', 'ten'], /--code-quota takes <requests>\/<window>/],
      [['--refresh-limit', '0'], /--refresh-limit takes/],
      [['--time-based-access', 'x'], /--time-based-access must be whole seconds/],
      [['--scope-base', 'https://x/'], /--scope-base must be an http\(s\) URL/],
      [['--user-code-case', 'title'], /--user-code-case must be upper, lower or mixed/],
      [['--port', '70000'], /--port must be a whole number/],
    ] as const) {
      const result = await failure(['--port', '0', ...args]);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, message);
    }
  });

  it('DEV-STOCK-CLIENT: the dialect comes from --dialect or --oauth-dialect, else GANTRY_DEV_OAUTH_DIALECT, else google', async () => {
    for (const [args, env, expected] of [
      [['--oauth-dialect', 'rfc8628'], {}, 'rfc8628'],
      [[], { GANTRY_DEV_OAUTH_DIALECT: 'rfc8628' }, 'rfc8628'],
      [['--dialect', 'google'], { GANTRY_DEV_OAUTH_DIALECT: 'rfc8628' }, 'google'],
      [[], { GANTRY_DEV_OAUTH_DIALECT: '' }, 'google'],
    ] as const) {
      const { child, value: info } = await startCli(['--port', '0', ...args], env);
      try {
        assert.equal(info.dialect, expected, JSON.stringify([args, env]));
        const code = await requestCode(info.url, { id: info.clientId, secret: info.clientSecret }, 'email');
        assert.equal(typeof code[expected === 'google' ? 'verification_url' : 'verification_uri'], 'string');
      } finally {
        await stopGantry(child);
      }
    }
    const server = await startDevOAuth({ host: '127.0.0.1' }, { GANTRY_DEV_OAUTH_PORT: '0', GANTRY_DEV_OAUTH_DIALECT: 'rfc8628' });
    try {
      assert.equal(server.dialect, 'rfc8628', 'the starter gantry dev uses reads the variable');
    } finally {
      await server.stop();
    }
  });

  it('DEV-STOCK-CLIENT: a bad --oauth-dialect or GANTRY_DEV_OAUTH_DIALECT exits 2 before anything listens, for gantry dev oauth and for gantry dev', async () => {
    for (const [args, env, command, message] of [
      [['--port', '0', '--oauth-dialect', 'rfc6749'], {}, ['dev', 'oauth'], /--oauth-dialect must be google or rfc8628, got "rfc6749"/],
      [['--port', '0', '--dialect', 'google', '--oauth-dialect', 'rfc8628'], {}, ['dev', 'oauth'], /disagree/],
      [['--port', '0'], { GANTRY_DEV_OAUTH_DIALECT: 'Google' }, ['dev', 'oauth'], /GANTRY_DEV_OAUTH_DIALECT must be google or rfc8628, got "Google"/],
      [['--oauth-dialect', 'github'], {}, ['dev'], /--oauth-dialect must be google or rfc8628, got "github"/],
      [[], { GANTRY_DEV_OAUTH_DIALECT: 'rfc-8628' }, ['dev'], /GANTRY_DEV_OAUTH_DIALECT must be google or rfc8628/],
    ] as const) {
      const result = await failure([...args], { ...env }, [...command]);
      assert.equal(result.code, 2, `${command.join(' ')} ${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, message);
      assert.doesNotMatch(result.stderr, /listening|registry/i, 'nothing started');
    }
  });
});
