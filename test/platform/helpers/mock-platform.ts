/**
 * A scripted stand-in (a mock) for the platform's REST API, on a real socket on 127.0.0.1, until the embedded
 * platform server (devserver/platform/) lands and the client is tested against it. It answers whatever the test's
 * script says — statuses, `x-ratelimit-*` and `retry-after` headers, the platform's error bodies — after an optional
 * delay, and records every request with the time on the test's clock and how many were in flight at once. It knows
 * nothing of the limits itself: the tests state what a limit-keeping client must do, the script what the platform says.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Clock } from '../../../lib/platform/index.js';

export interface Seen {
  method: string;
  url: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** On the test's clock (epoch ms). */
  at: number;
  /** Requests in flight when this one arrived, itself included. */
  inFlight: number;
}

export interface Answer {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Real milliseconds before answering. */
  delayMs?: number;
}

export type PlatformScript = (request: Seen, index: number) => Answer;

export interface MockPlatform {
  url: string;
  seen: Seen[];
  maxInFlight: number;
  setScript(script: PlatformScript): void;
  close(): Promise<void>;
}

export async function startMockPlatform(clock: Clock, script: PlatformScript = () => ({ status: 200, body: {} })): Promise<MockPlatform> {
  let current = script;
  let inFlight = 0;
  const sockets = new Set<Socket>();
  const state: MockPlatform = {
    url: '',
    seen: [],
    maxInFlight: 0,
    setScript(next) {
      current = next;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((req, res) => {
    inFlight += 1;
    state.maxInFlight = Math.max(state.maxInFlight, inFlight);
    const arrivedInFlight = inFlight;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = req.url ?? '';
      const seen: Seen = {
        method: req.method ?? '',
        url,
        path: url.split('?')[0]!,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: clock.now(),
        inFlight: arrivedInFlight,
      };
      state.seen.push(seen);
      const answer = current(seen, state.seen.length - 1);
      const send = () => {
        const text = answer.body === undefined ? '' : JSON.stringify(answer.body);
        res.writeHead(answer.status ?? 200, { ...(text ? { 'content-type': 'application/json; charset=utf-8' } : {}), ...answer.headers });
        res.end(text, () => {
          inFlight -= 1;
        });
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

/** The platform's bodies, as GitHub words them. */
export const bodies = {
  secondary: {
    message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.',
    documentation_url: 'https://docs.platform.example/rest/overview/rate-limits-for-the-rest-api',
  },
  primary: { message: 'API rate limit exceeded for user ID 1.', documentation_url: 'https://docs.platform.example/rest/overview/rate-limits-for-the-rest-api' },
  badCredentials: { message: 'Bad credentials', documentation_url: 'https://docs.platform.example/rest' },
  notFound: { message: 'Not Found', documentation_url: 'https://docs.platform.example/rest/repos/repos#get-a-repository' },
};
