// Requests to the embedded platform API over real sockets, each on its own connection so concurrency is real.
import { createSign } from 'node:crypto';
import http from 'node:http';

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
}

export function call(base: string, method: string, path: string, options: { token?: string; authorization?: string; body?: unknown } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { accept: 'application/vnd.platform+json' };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.authorization) headers.authorization = options.authorization;
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    if (payload) headers['content-type'] = 'application/json';
    const request = http.request(new URL(path, base), { method, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (c: Buffer) => chunks.push(c));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          body = undefined;
        }
        resolve({ status: response.statusCode!, headers: response.headers, body, text });
      });
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(payload);
  });
}

export const RATE_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-used', 'x-ratelimit-reset', 'x-ratelimit-resource'] as const;

export function rate(answer: Answer): { limit: number; remaining: number; used: number; reset: number; resource: string } {
  return {
    limit: Number(answer.headers['x-ratelimit-limit']),
    remaining: Number(answer.headers['x-ratelimit-remaining']),
    used: Number(answer.headers['x-ratelimit-used']),
    reset: Number(answer.headers['x-ratelimit-reset']),
    resource: String(answer.headers['x-ratelimit-resource']),
  };
}

/** An app's JWT, signed RS256 as an app signs it (claims overridable for the refusals). */
export function appJwt(privateKey: string | import('node:crypto').KeyObject, claims: Record<string, unknown>): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const head = `${encode({ alg: 'RS256', typ: 'JWT' })}.${encode(claims)}`;
  return `${head}.${createSign('RSA-SHA256').update(head).sign(privateKey).toString('base64url')}`;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
