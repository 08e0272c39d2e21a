import assert from 'node:assert/strict';
import net from 'node:net';
import tls from 'node:tls';
import { withServer, ROOT } from './helpers.js';
import type { SecretsServer } from '../../../devserver/secrets/index.js';

/** Writes raw bytes on one connection and collects the status lines of the responses. */
function exchange(server: SecretsServer, payload: string[], expected: number): Promise<number[]> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    let text = '';
    const statuses = () => [...text.matchAll(/HTTP\/1\.1 (\d{3}) [A-Z]/g)].map((m) => Number(m[1]));
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      if (statuses().length >= expected) {
        socket.destroy();
        resolve(statuses());
      }
    });
    socket.on('error', reject);
    socket.on('connect', async () => {
      for (const part of payload) {
        socket.write(part);
        await new Promise((r) => setTimeout(r, 20));
      }
    });
    setTimeout(() => {
      socket.destroy();
      resolve(statuses());
    }, 3000);
  });
}

describe('embedded kv server: the LIST method on the wire', () => {
  let server: SecretsServer;
  before(async () => ({ server } = await withServer()));
  after(() => server.stop());

  const head = (method: string, path: string, extra = '') => `${method} ${path} HTTP/1.1\r\nHost: x\r\nX-Secrets-Token: ${ROOT}\r\n${extra}`;

  it('SEC-EP-LIST: pipelined requests in one packet (a write with a body, then LIST, then a read) are framed and handled in order', async () => {
    const body = JSON.stringify({ note: 'LIST /v1/kv/ HTTP/1.1' });
    const statuses = await exchange(
      server,
      [
        head('POST', '/v1/kv/pipe/a', `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`) +
          body +
          head('LIST', '/v1/kv/pipe/', '\r\n') +
          head('GET', '/v1/kv/pipe/a', '\r\n'),
      ],
      3,
    );
    assert.deepEqual(statuses, [204, 200, 200]);
  });

  it('SEC-EP-LIST: a LIST split across packets and after a chunked body with trailers is still a LIST', async () => {
    const statuses = await exchange(
      server,
      [
        head('PUT', '/v1/kv/pipe/b', 'Transfer-Encoding: chunked\r\n\r\n') + '7\r\n{"a":1}\r\n',
        '0\r\nX-Trailer: t\r\n\r\nLI',
        `ST /v1/kv/pipe/ HTTP/1.1\r\nHost: x\r\nX-Secrets-Token: ${ROOT}\r\n\r\n`,
      ],
      2,
    );
    assert.deepEqual(statuses, [204, 200]);
  });

  it('a client cannot forge the internal LIST marker: a GET with made-up marker headers stays a read', async () => {
    const statuses = await exchange(server, [head('GET', '/v1/kv/pipe/', 'X-Gantry-List: LIST\r\n\r\n')], 1);
    assert.deepEqual(statuses, [404], 'a read of the folder path, not a list');
  });

  it('SEC-AUTH-TLS: a TLS ClientHello sent to the plain-http port is refused at once (400, closed), not held waiting for a head', async () => {
    const { hostname, port } = new URL(server.url);
    const started = Date.now();
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(port), hostname);
      let text = '';
      socket.on('connect', () => socket.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03])));
      socket.on('data', (chunk) => (text += chunk.toString('latin1')));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
      setTimeout(() => {
        socket.destroy();
        reject(new Error(`no answer after 3 s (got ${JSON.stringify(text)})`));
      }, 3000).unref();
    });
    assert.match(reply, /^HTTP\/1\.1 400 /);
    assert.ok(Date.now() - started < 2000);
  });

  it('SEC-AUTH-TLS: a real TLS client connecting to the plain-http port fails fast with the wrong-version error', async () => {
    const { hostname, port } = new URL(server.url);
    const error = await new Promise<NodeJS.ErrnoException>((resolve, reject) => {
      const socket = tls.connect({ host: hostname, port: Number(port), rejectUnauthorized: false });
      socket.on('secureConnect', () => reject(new Error('a TLS handshake with a plain-http server succeeded')));
      socket.on('error', resolve);
      setTimeout(() => {
        socket.destroy();
        reject(new Error('the TLS handshake hung for 3 s'));
      }, 3000).unref();
    });
    assert.match(`${error.code} ${error.message}`, /EPROTO|wrong version number|packet length too long/i);
  });
});
