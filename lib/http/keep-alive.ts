/**
 * The connection policy of every keep-alive pool (proxy.ts builds the pools; the HTTP core and the S3 clients send
 * through them). Node's agent alone sends on connections the server has ended (nodejs/node#47130):
 *
 * - A request that says `Connection: close` gives its connection up after the answer. Node keeps it in the pool unless
 *   the server echoes the header, which RFC 9112 §9.6 does not require (Python's http.server closes without it).
 * - A connection the server closed while it sat in the pool is not written to: a request that would take a pooled
 *   connection waits until the event loop has polled for I/O once more (an immediate inside an immediate: the first runs
 *   before the next poll), so that a close already on its way is read, and pooled connections that ended are dropped
 *   before the pool hands one out. Only when a pooled connection exists, and not when every pooled connection to that
 *   origin has already carried two answers and came back under `reuseAtOnceMs` (100 ms) ago: a server that closes
 *   right after answering never answers twice on one connection, and one that closes idle connections by a timer of
 *   its own has not started to close one idle so briefly. The wait is one turn of the event loop, and a chain of
 *   requests pays it on every link: at 16 in flight it was a fifth of the time `bench/pin` spent over its ideal.
 * - An idle connection is kept at most `idleConnectionMs` (4 s, as undici), under the 5 s idle timeout of Node's and
 *   many other servers; a shorter `Keep-Alive: timeout=` from the server wins (Node's keepSocketAlive reads it against
 *   the agent's `timeout`, which proxy.ts sets to this).
 *
 * - A request that cannot be sent again (a POST or PATCH without an Idempotency-Key) takes a pooled connection only if
 *   it has been idle less than `unrepeatableReuseMs` (1 s), else a new one. A server closes an idle connection by its
 *   own timer, which a starved event loop runs late and then before reading what arrived meanwhile: a request written
 *   in the last second or so of the server's idle timeout can meet a reset that the core may not answer by sending it
 *   again (send.ts). Seen at load 10–16 on 2 cores with the MCP conformance suite's server; a new connection costs a
 *   handshake only after a pause, when a round trip is not what the caller is waiting on.
 *
 * What is left — the server ends the connection while the request is on its way — is the core's to retry (send.ts).
 */
import type http from 'node:http';
import type { Socket } from 'node:net';

/** How long an idle connection stays in the pool, in ms. */
export const idleConnectionMs = 4_000;

/** How long a pooled connection may have been idle and still carry a request that cannot be sent again, in ms. */
export const unrepeatableReuseMs = 1_000;

/** How recently a pooled connection that has carried two answers must have come back to be reused without a wait, in ms. */
export const reuseAtOnceMs = 100;

/** Methods a server must treat as idempotent (RFC 9110 §9.2.2): a second copy of one changes nothing more (send.ts resends them). */
export const idempotentMethods: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);

/** A `Connection` value that asks to close, matched as Node matches it. */
export const connectionClose = /(?:^|\W)close(?:$|\W)/i;

/** Agent options that only tune the pool (Node's own among them) and so never enter a pool's name. */
const poolSettings: ReadonlySet<string> = new Set([
  'keepAlive',
  'keepAliveMsecs',
  'maxSockets',
  'maxTotalSockets',
  'maxFreeSockets',
  'scheduling',
  'timeout',
  'noDelay',
  'path',
]);

type AddRequest = (request: http.ClientRequest, options: http.RequestOptions) => void;

function hasIdleSockets(agent: http.Agent): boolean {
  return Object.values(agent.freeSockets).some((sockets) => sockets !== undefined && sockets.length > 0);
}

function unrepeatable(request: http.ClientRequest): boolean {
  return !idempotentMethods.has(request.method.toUpperCase()) && request.getHeader('idempotency-key') === undefined;
}

/** Ends the pooled connections the server has closed (their close read, or their socket no longer writable). */
function dropEnded(agent: http.Agent): void {
  for (const sockets of Object.values(agent.freeSockets)) {
    for (const socket of sockets ?? []) {
      if (!socket.destroyed && (!socket.writable || socket.readableEnded)) socket.destroy();
    }
  }
}

/** Ends the pooled connections to one origin that were given back before `before` (a time of `performance.now()`). */
function dropIdleSince(sockets: Socket[] | undefined, freedAt: WeakMap<object, number>, before: number): void {
  for (const socket of sockets ?? []) if (!socket.destroyed && (freedAt.get(socket) ?? Infinity) < before) socket.destroy();
}

export function applyConnectionPolicy<A extends http.Agent>(agent: A): A {
  const pooled = agent as unknown as { addRequest: AddRequest };
  const addRequest = pooled.addRequest.bind(agent);
  // When each pooled connection was last given back (Node's agent emits 'free' as it pools one), and how many times.
  const freedAt = new WeakMap<object, number>();
  const answers = new WeakMap<object, number>();
  agent.on('free', (socket: object) => {
    freedAt.set(socket, performance.now());
    answers.set(socket, (answers.get(socket) ?? 0) + 1);
  });
  // The pool a request's connection comes from, named as the agent names it: Node merges the agent's options over the
  // request's first, but the pool settings proxy.ts gives (and those Node adds) do not enter a name, and copying got's
  // ~35 request options for every request cost ~20 µs; an agent with options that do (TLS ones) gets the merge.
  const agentOptions = (agent as { options?: Record<string, unknown> }).options ?? {};
  const merged = Object.entries(agentOptions).some(([name, value]) => value !== undefined && value !== null && !poolSettings.has(name));
  const poolOf = (options: http.RequestOptions) => agent.freeSockets[agent.getName(merged ? { ...options, ...agentOptions } : options)];
  /** Whether every pooled connection the request may take has carried two answers and came back under `reuseAtOnceMs` ago. */
  const provenAndRecent = (sockets: Socket[] | undefined, now: number): boolean =>
    sockets !== undefined &&
    sockets.length > 0 &&
    sockets.every((socket) => (answers.get(socket) ?? 0) >= 2 && now - (freedAt.get(socket) ?? -Infinity) < reuseAtOnceMs);
  pooled.addRequest = (request, options) => {
    // Node decides to pool a connection by `shouldKeepAlive`, which only a server's `Connection: close` clears; the
    // request's own header must clear it too, or the socket goes back to the pool for the server to close under it.
    if (connectionClose.test(String(request.getHeader('connection') ?? '')))
      (request as http.ClientRequest & { shouldKeepAlive: boolean }).shouldKeepAlive = false;
    if (!hasIdleSockets(agent)) {
      addRequest(request, options);
      return;
    }
    const now = performance.now();
    const staleBefore = unrepeatable(request) ? now - unrepeatableReuseMs : undefined;
    const take = () => {
      dropEnded(agent);
      if (staleBefore !== undefined) dropIdleSince(poolOf(options), freedAt, staleBefore);
      addRequest(request, options);
    };
    if (provenAndRecent(poolOf(options), now)) take();
    else setImmediate(() => setImmediate(take));
  };
  return agent;
}
