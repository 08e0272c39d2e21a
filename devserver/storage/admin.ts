// `/_gantry/` admin endpoints of the storage server (never authenticated, never faulted): faults, stats (bytes
// received per resumable session), sessions and their expiry.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Stats } from './context.js';
import { checkStorageFault, type Faults } from './faults.js';
import { readRaw, send, MAX_JSON } from './http.js';
import type { SessionRecord } from './store.js';

export interface AdminDeps {
  faults: Faults;
  stats: Stats;
  expire(id: string): Promise<boolean>;
  sessions(): Record<string, SessionRecord>;
  notifications(): unknown[];
}

export async function adminRequest(req: IncomingMessage, res: ServerResponse, url: URL, deps: AdminDeps): Promise<void> {
  const method = (req.method ?? 'GET').toUpperCase();
  const json = (status: number, body: unknown) => send(res, method, { status, body });
  try {
    const expire = /^\/_gantry\/sessions\/([^/]+)\/expire$/.exec(url.pathname);
    if (expire && method === 'POST')
      return (await deps.expire(decodeURIComponent(expire[1]!))) ? json(200, { expired: true }) : json(404, { message: 'no such session' });
    switch (`${method} ${url.pathname}`) {
      case 'GET /_gantry/notifications':
        return json(200, { notifications: deps.notifications() });
      case 'GET /_gantry/stats':
        return json(200, deps.stats);
      case 'GET /_gantry/sessions':
        return json(200, {
          sessions: Object.values(deps.sessions()).map((s) => ({
            id: s.id,
            received: s.received,
            total: s.total ?? null,
            expiresAt: new Date(s.expiresAt).toISOString(),
          })),
        });
      case 'POST /_gantry/sessions/expire': {
        const ids = Object.keys(deps.sessions());
        for (const id of ids) await deps.expire(id);
        return json(200, { expired: ids.length });
      }
      case 'GET /_gantry/faults':
        return json(200, { faults: deps.faults.current() });
      case 'DELETE /_gantry/faults':
        deps.faults.set([]);
        return json(200, { faults: [] });
      case 'POST /_gantry/faults':
      case 'PUT /_gantry/faults': {
        const text = (await readRaw(req, MAX_JSON)).toString('utf8');
        const body: unknown = JSON.parse(text);
        const list = (Array.isArray(body) ? body : [body]).map(checkStorageFault);
        if (method === 'PUT') deps.faults.set(list);
        else deps.faults.add(list);
        return json(200, { faults: deps.faults.current() });
      }
      default:
        return json(404, { message: `no admin endpoint ${method} ${url.pathname}` });
    }
  } catch (error) {
    return json(400, { message: (error as Error).message });
  }
}
