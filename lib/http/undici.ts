// undici's index loads everything it offers on import: fetch, WebSocket, EventSource, cookies, the HTTP cache and the
// mock agents — about 13 MB of resident memory a Gantry process never uses (bench/install's peak RSS, see
// docs/performance.md). Gantry needs the Agent and its request API only, so it loads those two files and wires them
// the way the index does (the index assigns the API methods to Dispatcher.prototype). undici is pinned to an exact
// version; test/http/undici.test.ts checks these are the very classes the index exports and that the index stays
// unloaded, so an upgrade that moves a file fails a test, not a user.
import { createRequire } from 'node:module';
import type * as Undici from 'undici';

const load = createRequire(import.meta.url);
const dispatcherClass = load('undici/lib/dispatcher/dispatcher.js') as typeof Undici.Dispatcher;
Object.assign(dispatcherClass.prototype, load('undici/lib/api/index.js') as object);

export const Agent = load('undici/lib/dispatcher/agent.js') as typeof Undici.Agent;
export type { Dispatcher } from 'undici';
