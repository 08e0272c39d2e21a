/**
 * A scripted HTTP peer for the secrets client, on a real socket on 127.0.0.1. It is a stand-in (a mock) for the
 * one thing the embedded kv server cannot be asked to do: answer an exact, arbitrary sequence of statuses
 * (401, 415, 501, Retry-After values, resets) and count every request that reached it. Everything about the kv
 * protocol itself is tested against the embedded server.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface Recorded {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** A body sent as is (not JSON-encoded). */
  raw?: string;
  /** Destroy the socket instead of answering (after reading the request). */
  reset?: boolean;
}

export type Script = (request: Recorded, index: number) => Reply;

export interface ScriptedPeer {
  url: string;
  requests: Recorded[];
  setScript(script: Script): void;
  close(): Promise<void>;
}

export async function startScriptedPeer(script: Script = () => ({ status: 200, body: { data: {} } })): Promise<ScriptedPeer> {
  let current = script;
  const requests: Recorded[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const recorded: Recorded = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      requests.push(recorded);
      const reply = current(recorded, requests.length - 1);
      if (reply.reset) {
        req.socket.destroy();
        return;
      }
      const text = reply.raw ?? (reply.body === undefined ? '' : JSON.stringify(reply.body));
      res.writeHead(reply.status, { ...(text && reply.raw === undefined ? { 'content-type': 'application/json' } : {}), ...reply.headers });
      res.end(text);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    setScript(next) {
      current = next;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The Vault response envelope with nulls where empty. */
export function envelope(data: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { request_id: 'req-1', lease_id: '', renewable: false, lease_duration: 0, data, wrap_info: null, warnings: null, auth: null, ...extra };
}
