/**
 * The ops endpoints: GET /healthz (alive), /readyz (each check's state; 503 while not ready or draining) and /metrics
 * (Prometheus text), answered by one handler that a server puts in front of its own routes, or on a port of their own
 * (`--metrics-port`) when the public port must not show them.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Health } from './health.js';
import type { ServerMetrics } from './metrics.js';

export interface OpsPaths {
  health: string;
  ready: string;
  metrics: string;
}

export const defaultOpsPaths: Readonly<OpsPaths> = Object.freeze({ health: '/healthz', ready: '/readyz', metrics: '/metrics' });

export interface ServerOps {
  health: Health;
  metrics: ServerMetrics;
  paths: OpsPaths;
}

/** Answers `request` when it is for an ops path (true), else leaves it (false). */
export type OpsHandler = (request: IncomingMessage, response: ServerResponse) => boolean;

export function opsHandler(ops: ServerOps): OpsHandler {
  const { health, metrics, paths } = ops;
  return (request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path !== paths.health && path !== paths.ready && path !== paths.metrics) return false;
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'application/json' }).end(`${JSON.stringify({ message: 'GET only' })}\n`);
      return true;
    }
    const send = (status: number, type: string, text: string) => {
      response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text) });
      response.end(request.method === 'HEAD' ? undefined : text);
    };
    const fail = (error: unknown) => {
      if (!response.headersSent) send(500, 'application/json', `${JSON.stringify({ message: error instanceof Error ? error.name : 'failed' })}\n`);
    };
    if (path === paths.health) send(200, 'application/json', `${JSON.stringify({ status: 'alive' })}\n`);
    else if (path === paths.ready)
      health
        .report()
        .then((report) => send(report.status === 'ready' ? 200 : 503, 'application/json', `${JSON.stringify(report)}\n`))
        .catch(fail);
    else
      metrics
        .text()
        .then((text) => send(200, metrics.contentType, text))
        .catch(fail);
    return true;
  };
}

/** The ops endpoints on a port of their own; anything else there is a 404. */
export async function startOpsServer(handle: OpsHandler, host: string, port: number): Promise<{ port: number; server: Server; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    if (!handle(request, response)) response.writeHead(404, { 'content-type': 'application/json' }).end(`${JSON.stringify({ message: 'not an ops path' })}\n`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
