/** How an attempt that got no answer, or whose body broke off, becomes a typed error that keeps no credentials. */
import type { PlainResponse } from 'got';
import { GantryError } from '../errors.js';
import { redact, redactUrl } from '../redact.js';
import { NetworkError, ProtocolError } from './errors.js';
import { describeProxy, type ProxyAgents } from './proxy.js';

/**
 * got's own codes wrap a cause that has the real one; hpagent says only "Bad response: 407" or "Proxy timeout". A 407
 * is ERR_PROXY_AUTH, as the proxy's 407 to a request sent to it in absolute form is (`proxyRefusal`); any other
 * refused CONNECT is ERR_PROXY_TUNNEL.
 */
function errorCodeOf(error: unknown): string {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current && typeof current === 'object' && !seen.has(current)) {
    seen.add(current);
    const { code, name, message } = current as { code?: unknown; name?: unknown; message?: unknown };
    if (typeof code === 'string' && !code.startsWith('ERR_GOT_')) return code;
    if (name === 'TimeoutError' || message === 'Proxy timeout') return 'ETIMEDOUT';
    if (typeof message === 'string' && /^Bad response: \d{3}$/.test(message)) return message.endsWith(' 407') ? 'ERR_PROXY_AUTH' : 'ERR_PROXY_TUNNEL';
    current = (current as { cause?: unknown }).cause;
  }
  return 'ERR_NETWORK';
}

/** The proxy's 407 to a request sent to it in absolute form: no response from the target, as a refused CONNECT. */
export function proxyRefusal(response: PlainResponse): Error {
  const reason = response.statusMessage ? ` ${response.statusMessage}` : '';
  return Object.assign(new Error(`the proxy answered 407${reason}`), { code: 'ERR_PROXY_AUTH' });
}

/**
 * What a typed error keeps as its cause: the error below got's wrapper. A got RequestError carries the request's
 * options, headers and credentials included, and would print them with --verbose or util.inspect.
 */
function causeOf(error: unknown): unknown {
  if (error instanceof Error && 'options' in error) {
    const { cause } = error as Error & { cause?: unknown };
    return cause instanceof Error && !('options' in cause) ? cause : new Error(redact(error.message));
  }
  return error;
}

/** A Gantry error raised inside got (by a hook), found under got's wrapper. */
function gantryErrorIn(error: unknown): GantryError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current instanceof Error; depth += 1) {
    if (current instanceof GantryError) return current;
    current = (current as Error & { cause?: unknown }).cause;
  }
  return undefined;
}

/** A typed error for an attempt that got no response, or whose body broke off. */
export function failure(agents: ProxyAgents, error: unknown, method: string, url: URL, attempts: number, maxRedirects: number): Error {
  const raised = gantryErrorIn(error);
  if (raised) return raised;
  if ((error as { code?: unknown }).code === 'ERR_TOO_MANY_REDIRECTS') {
    return new ProtocolError(
      `${method} ${redactUrl(url)} was redirected more than ${maxRedirects} times`,
      'check the address: the server may be redirecting in a loop',
    );
  }
  const proxy = agents.proxyFor(url);
  return new NetworkError({
    method,
    url: url.toString(),
    errorCode: errorCodeOf(error),
    cause: causeOf(error),
    attempts,
    ...(proxy ? { proxy: describeProxy(proxy) } : {}),
  });
}
