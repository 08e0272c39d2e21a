/**
 * `gantry mcp tools` and `gantry mcp call` in a process of their own (through tsx), against oidc-provider and
 * Gantry's context server on 127.0.0.1: the sign-in address printed with --no-browser and followed by the test's
 * form-poster, tokens kept in a private file (--store file) and reused, and the exit codes (0, 1 for a tool's error,
 * 2 for bad input before anything is sent, 3 for an unreachable server).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../lib/log.js';
import { startContextServer, type ContextServer } from '../../lib/mcp/server/index.js';
import { exited, spawnGantry } from '../cli/gantry-process.js';
import { FormBrowser } from './fixtures-client/browser.js';
import { startAuthorizationServer, type AuthorizationServerPeer } from './fixtures-client/oidc.js';
import { testTools } from './fixtures-client/tools.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The sign-in addresses the command printed. */
  signIns: number;
}

describe('gantry mcp tools|call', function () {
  this.timeout(120_000);
  let op: AuthorizationServerPeer;
  let server: ContextServer;
  let configDir: string;
  let browser: FormBrowser;

  before(async () => {
    op = await startAuthorizationServer();
    server = await startContextServer({ authorizationServer: op.issuer, tools: testTools, logger: silentLogger });
  });
  after(async () => {
    await server?.stop();
    await op?.stop();
  });
  beforeEach(async () => {
    configDir = await mkdtemp(join(tmpdir(), 'gantry-mcp-cli-'));
    browser = new FormBrowser();
  });
  afterEach(async () => {
    await rm(configDir, { recursive: true, force: true });
  });

  /** Runs gantry; a sign-in address on stderr is followed by the form-poster, as a person in a browser would. */
  async function gantry(args: string[], env: Record<string, string> = {}): Promise<Run> {
    const child = spawnGantry(args, { GANTRY_CONFIG_DIR: configDir, ...env });
    let stdout = '';
    let stderr = '';
    let signIns = 0;
    const browsing: Promise<unknown>[] = [];
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      for (const match of chunk.toString().matchAll(/^\s+(http:\/\/127\.0\.0\.1:\d+\/auth\?\S+)$/gm)) {
        signIns += 1;
        browsing.push(browser.authorize(match[1]!));
      }
    });
    const code = await exited(child);
    await Promise.all(browsing);
    return { code, stdout, stderr, signIns };
  }
  const flags = ['--no-browser', '--store', 'file'];

  it('CTX-EP-401-WWW-AUTHENTICATE CTX-STD-RFC7591 CTX-EP-AUTHORIZATION-REQUEST: call signs in through the printed address, prints the result, and a second call reuses the stored tokens', async () => {
    const first = await gantry(['mcp', 'call', server.url, 'modules_resolve', '{"source": "hashicorp/consul/aws"}', ...flags]);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.signIns, 1);
    assert.match(first.stdout, /"echoed": "hashicorp\/consul\/aws"/);
    const second = await gantry(['mcp', 'call', server.url, 'modules_resolve', '{"source": "again"}', '--json', ...flags]);
    assert.equal(second.code, 0, second.stderr);
    assert.equal(second.signIns, 0, 'the stored tokens were used');
    assert.deepEqual(JSON.parse(second.stdout).structuredContent, { echoed: 'again' });
    // No token on any command line or output.
    assert.doesNotMatch(first.stderr + first.stdout + second.stderr + second.stdout, /eyJ[A-Za-z0-9_-]{10,}\./);
  });

  it('tools lists each tool with the scope it needs (--json too), and ends quietly when the reader goes away', async () => {
    const table = await gantry(['mcp', 'tools', server.url, ...flags]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^NAME\s+SCOPE\s+DESCRIPTION/m);
    assert.match(table.stdout, /^gate_run\s+gates:run\s+Reports progress/m);
    const listed = await gantry(['mcp', 'tools', server.url, '--json', ...flags]);
    const tools = JSON.parse(listed.stdout) as Array<{ name: string; requiredScope: string }>;
    assert.deepEqual(
      tools.map((t) => [t.name, t.requiredScope]),
      [
        ['modules_resolve', 'modules:read'],
        ['gate_run', 'gates:run'],
        ['platform_rate_limit', 'platform:read'],
      ],
    );
    const child = spawnGantry(['mcp', 'tools', server.url, ...flags], { GANTRY_CONFIG_DIR: configDir });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout!.once('data', () => child.stdout!.destroy());
    assert.equal(await exited(child), 0, stderr);
    assert.doesNotMatch(stderr, /error|EPIPE/i);
  });

  it('a tool result with isError is exit 1, its text shown; a tool the server does not have says so', async () => {
    const run = await gantry(['mcp', 'call', server.url, 'modules_resolve', '{"source": "fail"}', ...flags]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stdout, /no such module: fail/);
    assert.match(run.stderr, /the tool modules_resolve reported an error/);
    const unknown = await gantry(['mcp', 'call', server.url, 'no_such_tool', '{}', ...flags]);
    assert.equal(unknown.code, 1, unknown.stderr);
    assert.match(unknown.stderr, /the server has no tool no_such_tool\nhint: gantry mcp tools http:\/\/127\.0\.0\.1:\d+\/mcp lists them/);
  });

  it('CTX-ERR-403: a call that needs more scopes signs in once more with the merged scopes (--json, progress)', async () => {
    const run = await gantry(['mcp', 'call', server.url, 'gate_run', '{"url": "https://example.test"}', '--json', ...flags]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.signIns, 2);
    assert.deepEqual(JSON.parse(run.stdout).structuredContent, { gated: 'https://example.test' });
    const refused = await gantry(['mcp', 'call', server.url, 'platform_rate_limit', ...flags]);
    assert.equal(refused.code, 1);
    assert.equal(refused.signIns, 1, 'one re-authorization, then the refusal');
    assert.match(refused.stderr, /still answered 403 insufficient_scope/);
  });

  it('bad JSON arguments, a bad URL, a bad port or a secret without its client id are exit 2 before anything is sent', async () => {
    let requests = 0;
    const watcher = http.createServer((_request, response) => {
      requests += 1;
      response.writeHead(500).end();
    });
    await new Promise<void>((resolve) => watcher.listen(0, '127.0.0.1', () => resolve()));
    const url = `http://127.0.0.1:${(watcher.address() as AddressInfo).port}/mcp`;
    try {
      const cases: Array<[string[], RegExp, Record<string, string>?]> = [
        [['mcp', 'call', url, 'modules_resolve', '{"source": '], /not JSON/],
        [['mcp', 'call', url, 'modules_resolve', '[1, 2]'], /must be a JSON object/],
        [['mcp', 'call', 'not a url', 'modules_resolve'], /not an absolute URL/],
        [['mcp', 'tools', 'ftp://127.0.0.1/mcp'], /must be http\(s\)/],
        [['mcp', 'tools', 'http://mcp.example.com/mcp'], /over plain http/],
        [['mcp', 'tools', url, '--callback-port', '70000'], /no port number/],
        [
          ['mcp', 'tools', url],
          /GANTRY_MCP_CLIENT_SECRET is set but no client id is given\nhint: give --client-id/,
          { GANTRY_MCP_CLIENT_SECRET: 'a-secret-value' },
        ],
      ];
      for (const [args, message, env] of cases) {
        const run = await gantry([...args, ...flags], env);
        assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
        assert.match(run.stderr, message);
      }
      assert.equal(requests, 0);
    } finally {
      await new Promise<void>((resolve) => watcher.close(() => resolve()));
    }
  });

  it('an unreachable server is exit 3 after the retries', async () => {
    const probe = http.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const run = await gantry(['mcp', 'tools', `http://127.0.0.1:${port}/mcp`, ...flags]);
    assert.equal(run.code, 3, run.stderr);
    assert.match(run.stderr, /ECONNREFUSED|refused/i);
  });
});
