/**
 * The connection policy of every keep-alive pool (proxy.ts builds the pools; the HTTP core and the S3 clients send
 * through them). Node's agent alone sends on connections the server has ended (nodejs/node#47130):
 *
 * - A request that says `Connection: close` gives its connection up after the answer. Node keeps it in the pool unless
 *   the server echoes the header, which RFC 9112 §9.6 does not require (Python's http.server closes without it).
 * - A connection the server closed while it sat in the pool is not written to: a request that would take a pooled
 *   connection waits until the event loop has polled for I/O once more (an immediate inside an immediate: the first runs
 *   before the next poll), so that a close already on its way is read, and pooled connections that ended are dropped
 *   before the pool hands one out. Microseconds, and only when a pooled connection exists.
 * - An idle connection is kept at most `idleConnectionMs` (4 s, as undici), under the 5 s idle timeout of Node's and
 *   many other servers; a shorter `Keep-Alive: timeout=` from the server wins (Node's keepSocketAlive reads it against
 *   the agent's `timeout`, which proxy.ts sets to this).
 *
 * What is left — the server ends the connection while the request is on its way — is the core's to retry (client.ts).
 */
import type http from 'node:http';

/** How long an idle connection stays in the pool, in ms. */
export const idleConnectionMs = 4_000;

/** A `Connection` value that asks to close, matched as Node matches it. */
export const connectionClose = /(?:^|\W)close(?:$|\W)/i;

type AddRequest = (request: http.ClientRequest, options: http.RequestOptions) => void;

function hasIdleSockets(agent: http.Agent): boolean {
  return Object.values(agent.freeSockets).some((sockets) => sockets !== undefined && sockets.length > 0);
}

/** Ends the pooled connections the server has closed (their close read, or their socket no longer writable). */
function dropEnded(agent: http.Agent): void {
  for (const sockets of Object.values(agent.freeSockets)) {
    for (const socket of sockets ?? []) {
      if (!socket.destroyed && (!socket.writable || socket.readableEnded)) socket.destroy();
    }
  }
}

export function applyConnectionPolicy<A extends http.Agent>(agent: A): A {
  const pooled = agent as unknown as { addRequest: AddRequest };
  const addRequest = pooled.addRequest.bind(agent);
  pooled.addRequest = (request, options) => {
    // Node decides to pool a connection by `shouldKeepAlive`, which only a server's `Connection: close` clears; the
    // request's own header must clear it too, or the socket goes back to the pool for the server to close under it.
    if (connectionClose.test(String(request.getHeader('connection') ?? '')))
      (request as http.ClientRequest & { shouldKeepAlive: boolean }).shouldKeepAlive = false;
    if (!hasIdleSockets(agent)) {
      addRequest(request, options);
      return;
    }
    setImmediate(() =>
      setImmediate(() => {
        dropEnded(agent);
        addRequest(request, options);
      }),
    );
  };
  return agent;
}
