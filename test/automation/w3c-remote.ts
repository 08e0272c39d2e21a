/**
 * A MOCK remote end, used only where no real peer on this machine can answer: Debian's chromedriver (and
 * WebKitWebDriver) answer a wrong method with 404 `unknown command`, so the W3C `unknown method` error (405) cannot
 * be produced by a real driver here. This server answers with the responses the spec and the W3C error table give:
 * `POST /session` → `{sessionId, value}`, `DELETE /session/<id>` → `{}`, any other method on `/session/<id>` →
 * 405 `{value: {error: 'unknown method', message, stacktrace}}`. Everything else is tested against chromedriver.
 */
import { sendJson, startHttpPeer, type HttpPeer } from '../peers/http.js';

export const recordedSessionId = 'a3f1c2d4e5b60718293a4b5c6d7e8f90';

export const unknownMethodBody = {
  value: {
    error: 'unknown method',
    message: 'GET /session/a3f1c2d4e5b60718293a4b5c6d7e8f90 did not match a known command',
    stacktrace: 'at dispatch (remote.js:42:7)',
  },
};

export async function startW3cRemote(): Promise<HttpPeer> {
  const live = new Set<string>();
  return startHttpPeer((request, response) => {
    const path = request.url.split('?')[0] ?? '';
    if (path === '/session') {
      if (request.method !== 'POST')
        return sendJson(response, 405, { value: { error: 'unknown method', message: `${request.method} /session`, stacktrace: '' } });
      let body: unknown;
      try {
        body = JSON.parse(request.body);
      } catch {
        return sendJson(response, 400, { value: { error: 'invalid argument', message: 'body is not JSON', stacktrace: '' } });
      }
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        return sendJson(response, 400, { value: { error: 'invalid argument', message: 'body is not a JSON object', stacktrace: '' } });
      }
      live.add(recordedSessionId);
      return sendJson(response, 200, { sessionId: recordedSessionId, value: { browserName: 'recorded', acceptInsecureCerts: false } });
    }
    const match = /^\/session\/([^/]+)$/.exec(path);
    if (match) {
      const id = decodeURIComponent(match[1] ?? '');
      if (request.method === 'DELETE') {
        if (!live.delete(id)) return sendJson(response, 404, { value: { error: 'invalid session id', message: `no session ${id}`, stacktrace: '' } });
        return sendJson(response, 200, {});
      }
      return sendJson(response, 405, unknownMethodBody);
    }
    return sendJson(response, 404, { value: { error: 'unknown command', message: `${request.method} ${path}`, stacktrace: '' } });
  });
}
