// A plain node:http webhook receiver for the embedded platform's deliveries: it keeps every request's raw bytes and
// headers, answers as a test asks (a status, a delay, never), and checks signatures with node:crypto — nothing of
// lib/webhooks, so the platform's deliveries are checked by a reading of their own.
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** Header names as they came on the wire (case kept). */
  rawHeaderNames: string[];
  body: Buffer;
  at: number;
  /** The header's value (one), by any case of its name. */
  header(name: string): string | undefined;
  /** The JSON payload: the body, or a form body's `payload` field. */
  json(): any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export type Answer = { status?: number; body?: string; delayMs?: number; hang?: boolean };

export interface Receiver {
  url: string;
  received: Received[];
  /** The next request (already here or yet to come) that `match` accepts; fails after `timeoutMs`. */
  next(match?: (r: Received) => boolean, timeoutMs?: number): Promise<Received>;
  /** Every request of an event so far. */
  events(event: string): Received[];
  answer: (r: Received) => Answer;
  close(): Promise<void>;
}

export async function startReceiver(answer: (r: Received) => Answer = () => ({ status: 200, body: 'ok' })): Promise<Receiver> {
  const received: Received[] = [];
  const consumed = new Set<Received>();
  let waiters: { match: (r: Received) => boolean; resolve: (r: Received) => void }[] = [];
  const sockets = new Set<import('node:net').Socket>();
  const receiver: Receiver = {
    url: '',
    received,
    answer,
    next(match = () => true, timeoutMs = 5000) {
      const found = received.find((r) => !consumed.has(r) && match(r));
      if (found) {
        consumed.add(found);
        return Promise.resolve(found);
      }
      return new Promise<Received>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters = waiters.filter((w) => w !== waiter);
          reject(
            new Error(`no matching delivery within ${timeoutMs} ms (received: ${received.map((r) => r.header('x-platform-event')).join(', ') || 'none'})`),
          );
        }, timeoutMs);
        const waiter = {
          match,
          resolve: (r: Received) => {
            clearTimeout(timer);
            resolve(r);
          },
        };
        waiters.push(waiter);
      });
    },
    events: (event) => received.filter((r) => r.header('x-platform-event') === event),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const rawHeaderNames = req.rawHeaders.filter((_, i) => i % 2 === 0);
      const r: Received = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        rawHeaderNames,
        body,
        at: Date.now(),
        header: (name) => {
          const value = req.headers[name.toLowerCase()];
          return Array.isArray(value) ? value[0] : value;
        },
        json: () => {
          const type = r.header('content-type') ?? '';
          const text = type.startsWith('application/x-www-form-urlencoded')
            ? new URLSearchParams(body.toString('utf8')).get('payload')!
            : body.toString('utf8');
          return JSON.parse(text);
        },
      };
      received.push(r);
      const waiter = waiters.find((w) => w.match(r));
      if (waiter) {
        consumed.add(r);
        waiters = waiters.filter((w) => w !== waiter);
        waiter.resolve(r);
      }
      const how = receiver.answer(r);
      if (how.hang) return;
      const reply = () => {
        if (res.destroyed) return;
        res.writeHead(how.status ?? 200, { 'content-type': 'text/plain', 'x-receiver': 'test' });
        res.end(how.body ?? 'ok');
      };
      if (how.delayMs) setTimeout(reply, how.delayMs);
      else reply();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}

/** `sha1=<hex>` / `sha256=<hex>` of the exact bytes, compared in constant time. */
export function signatureMatches(header: string | undefined, algorithm: 'sha1' | 'sha256', secret: string, body: Buffer): boolean {
  if (!header?.startsWith(`${algorithm}=`)) return false;
  const expected = Buffer.from(`${algorithm}=${createHmac(algorithm, secret).update(body).digest('hex')}`);
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
