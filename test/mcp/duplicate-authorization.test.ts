// docs/mcp.md: "a malformed header (… two headers)" is a 400 invalid_request. node:http keeps the first of two
// Authorization headers and drops the second, so the server reads the raw headers; sent here on a raw socket, as a
// client or proxy that repeats the header would.
import assert from 'node:assert/strict';
import net from 'node:net';
import { startOAuthServer, type OAuthServer } from '../../devserver/oauth/index.js';
import { silentLogger } from '../../lib/log.js';
import { startContextServer, type ContextServer } from '../../lib/mcp/server/index.js';
import { testTools } from './fixtures-client/tools.js';

/** Sends `head` (and a JSON body) on a socket of its own; the status line and headers of the answer. */
function rawPost(url: string, headers: string[]): Promise<{ status: number; head: string }> {
  const target = new URL(url);
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(target.port), target.hostname, () => {
      socket.write(
        [
          `POST ${target.pathname} HTTP/1.1`,
          `Host: ${target.host}`,
          'Content-Type: application/json',
          'Accept: application/json, text/event-stream',
          `Content-Length: ${Buffer.byteLength(body)}`,
          'Connection: close',
          ...headers,
          '',
          body,
        ].join('\r\n'),
      );
    });
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => {
      const head = answer.split('\r\n\r\n')[0]!;
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), head });
    });
  });
}

describe('mcp serve: two Authorization headers (docs/mcp.md)', function () {
  this.timeout(30_000);
  let oauth: OAuthServer;
  let server: ContextServer;
  before(async () => {
    oauth = await startOAuthServer();
    server = await startContextServer({ authorizationServer: oauth.url, tools: testTools, logger: silentLogger });
  });
  after(async () => {
    await server.stop();
    await oauth.stop();
  });

  it('DOCS-AGREE-SERVERS: two Authorization headers are a 400 invalid_request, whichever comes first', async () => {
    for (const headers of [
      ['Authorization: Bearer first-token', 'Authorization: Bearer second-token'],
      ['Authorization: Bearer one', 'authorization: Basic dXNlcjpwYXNz'],
      ['Authorization:', 'Authorization: Bearer x'],
    ]) {
      const answer = await rawPost(server.url, headers);
      assert.equal(answer.status, 400, `${headers.join(' | ')}: ${answer.head}`);
      assert.match(answer.head, /www-authenticate: Bearer .*error="invalid_request", error_description="more than one Authorization header"/i);
    }
  });

  it('DOCS-AGREE-SERVERS: one Authorization header with a token the server does not know is still a 401 invalid_token', async () => {
    const answer = await rawPost(server.url, ['Authorization: Bearer not-a-token-of-this-server']);
    assert.equal(answer.status, 401, answer.head);
    assert.match(answer.head, /error="invalid_token"/);
  });
});
