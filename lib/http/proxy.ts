/**
 * Outgoing proxies: `HTTPS_PROXY` for https:// targets, `HTTP_PROXY` for http:// targets (the lower-case names first,
 * as curl reads them), and `NO_PROXY` for the hosts that go direct. The agents here serve every connection Gantry
 * opens: the HTTP core's clients and every S3 client (through the SDK's NodeHttpHandler, see s3-handler.ts).
 *
 * NO_PROXY, as curl reads it (lib/noproxy.c), plus ports:
 * - a comma (or space) separated list, matched without regard to case; `*` alone sends every host direct;
 * - a name matches itself and every name under it: `example.com` and `.example.com` (a leading `.` or `*.` is dropped)
 *   both match `example.com` and `api.example.com`, never `badexample.com`;
 * - `host:port` (`[v6]:port`) matches that port only — curl has no ports here; Go's and most Node tools' readings do;
 * - an IP address matches that address, and an address with a prefix (`10.0.0.0/8`, `fd00::/8`) the whole range;
 *   names are not resolved to match addresses;
 * - loopback is not special: `localhost` and `127.0.0.1` go through the proxy unless listed, as with curl (Go and
 *   some tools send them direct implicitly).
 *
 * An http:// target behind an http:// proxy goes as curl sends it: the request itself, in absolute form
 * (`GET http://host:port/path HTTP/1.1`, the Host header the target's), with `Proxy-Authorization` when the proxy URL
 * has credentials, on keep-alive connections to the proxy that every proxied target shares. Every https:// target, and
 * an http:// one behind an https:// proxy, goes through hpagent's tunnel: a CONNECT to the proxy, then the request (and
 * TLS) inside it.
 */
import { expectOptions, expectString } from '../arguments.js';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { HttpProxyAgent, HttpsProxyAgent } from 'hpagent';
import { UsageError } from '../errors.js';
import { registerSecret } from '../redact.js';
import { applyConnectionPolicy, idleConnectionMs } from './keep-alive.js';

export interface ProxySettings {
  /** The proxy for http:// targets (`http_proxy`, `HTTP_PROXY`). */
  httpProxy?: string | undefined;
  /** The proxy for https:// targets (`https_proxy`, `HTTPS_PROXY`). */
  httpsProxy?: string | undefined;
  /** Hosts that go direct (`no_proxy`, `NO_PROXY`). */
  noProxy?: string | undefined;
}

/** Reads the proxy variables; the lower-case name wins over the upper-case one, an empty value counts as unset. */
export function proxySettingsFromEnv(env: NodeJS.ProcessEnv = process.env): ProxySettings {
  expectOptions('proxySettingsFromEnv', env, 'env');
  const pick = (lower: string, upper: string) => [env[lower], env[upper]].map((value) => value?.trim()).find((value) => value) || undefined;
  return { httpProxy: pick('http_proxy', 'HTTP_PROXY'), httpsProxy: pick('https_proxy', 'HTTPS_PROXY'), noProxy: pick('no_proxy', 'NO_PROXY') };
}

interface NoProxyRule {
  port: number | undefined;
  matches(host: string): boolean;
}

function bare(host: string): string {
  return host
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
}

function ipRule(address: string, prefix: number | undefined): (host: string) => boolean {
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  const list = new BlockList();
  if (prefix === undefined) list.addAddress(address, family);
  else list.addSubnet(address, prefix, family);
  return (host) => {
    const kind = isIP(host);
    return kind !== 0 && list.check(host, kind === 6 ? 'ipv6' : 'ipv4');
  };
}

function parseRule(entry: string): NoProxyRule | undefined {
  let host = entry;
  let port: number | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) {
    host = bracketed[1]!;
    port = bracketed[2] === undefined ? undefined : Number(bracketed[2]);
  } else if (/^[^:]+:\d+$/.test(entry)) {
    const at = entry.lastIndexOf(':');
    host = entry.slice(0, at);
    port = Number(entry.slice(at + 1));
  }
  const cidr = /^(.+)\/(\d{1,3})$/.exec(host);
  if (cidr && isIP(cidr[1]!)) return { port, matches: ipRule(cidr[1]!, Number(cidr[2])) };
  if (isIP(host)) return { port, matches: ipRule(host, undefined) };
  const name = bare(host.replace(/^\*?\./, ''));
  if (name === '') return undefined;
  return { port, matches: (candidate) => candidate === name || candidate.endsWith(`.${name}`) };
}

/** A predicate telling whether a host (and port) goes direct under a NO_PROXY value. */
export function noProxyMatcher(noProxy: string | undefined): (host: string, port: number) => boolean {
  if (noProxy !== undefined && typeof noProxy !== 'string')
    expectString('noProxyMatcher', 'noProxy', noProxy, 'a NO_PROXY list such as "localhost,.internal" (or left out)');
  const entries = (noProxy ?? '')
    .split(/[\s,]+/)
    .map((entry) => entry.trim().toLowerCase())
    .filter(Boolean);
  if (entries.includes('*')) return () => true;
  const rules = entries.map(parseRule).filter((rule): rule is NoProxyRule => rule !== undefined);
  return (host, port) => {
    const candidate = bare(host);
    return rules.some((rule) => (rule.port === undefined || rule.port === port) && rule.matches(candidate));
  };
}

function parseProxyUrl(value: string, variable: string): URL {
  let url: URL;
  try {
    // A proxy given without a scheme is an http proxy, as curl takes it.
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`);
  } catch {
    throw new UsageError(`${variable} is not a URL`, { hint: `set ${variable} to the proxy's address, such as http://proxy.example:3128` });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`${variable} uses ${url.protocol.slice(0, -1)}, which is not supported`, { hint: 'use an http:// or https:// proxy' });
  }
  // The credentials go to the proxy only, in Proxy-Authorization; they must show up nowhere else.
  if (url.username || url.password) {
    const user = decodeURIComponent(url.username);
    const password = decodeURIComponent(url.password);
    registerSecret(password);
    registerSecret(Buffer.from(`${user}:${password}`).toString('base64'));
  }
  return url;
}

type ConnectionCallback = (error: Error | null, stream: Duplex) => void;
/** Opens a tunnel to the host and port in `options` and hands the socket to `callback`. */
type Tunnel = (options: https.RequestOptions, callback?: ConnectionCallback) => Duplex | null | undefined;

/**
 * Makes a keep-alive agent open each connection directly or through a proxy tunnel, decided per host and port. One
 * pool holds both kinds of socket: a host's route never changes, so neither is ever handed to the other's requests.
 */
function routed<A extends http.Agent>(agent: A, defaultPort: number, route: (host: string, port: number) => Tunnel | undefined): A {
  const direct = agent.createConnection.bind(agent) as Tunnel;
  agent.createConnection = (options: https.RequestOptions, callback?: ConnectionCallback) =>
    (route(String(options.host ?? 'localhost'), Number(options.port ?? defaultPort)) ?? direct)(options, callback);
  return agent;
}

/** The proxy's host (IPv6 without brackets) and port, as a connection to it takes them. */
function proxyEndpoint(proxy: URL): { host: string; port: number } {
  return { host: proxy.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(proxy.port || (proxy.protocol === 'https:' ? 443 : 80)) };
}

/** `http://host[:port]/path?query`: the target as a request in absolute form names it (default port left out). */
function absoluteForm(host: string, port: number, path: string): string {
  const name = host.replace(/^\[(.*)\]$/, '$1');
  return `http://${isIP(name) === 6 ? `[${name}]` : name}${port === 80 ? '' : `:${port}`}${path.startsWith('/') ? path : `/${path}`}`;
}

/** The parts of a ClientRequest (Node's OutgoingMessage) that hold a head rendered before it has a socket. */
interface RenderedRequest {
  _header?: string | null;
  _headerSent?: boolean;
  outputData?: { data: unknown }[];
  outputSize?: number;
}

/** Replaces a rendered head's first line (`line`) with `replacement`, in the head and where it waits for the socket. */
function rewriteHead(request: RenderedRequest, line: string, replacement: string): boolean {
  const old = request._header;
  if (typeof old !== 'string' || !old.startsWith(line)) return false;
  const head = replacement + old.slice(line.length);
  if (request._headerSent) {
    const queued = request.outputData?.[0];
    if (!queued || typeof queued.data !== 'string' || !queued.data.startsWith(old)) return false;
    queued.data = head + queued.data.slice(old.length);
    request.outputSize = (request.outputSize ?? 0) + head.length - old.length;
  }
  request._header = head;
  return true;
}

type AddRequest = (request: http.ClientRequest, options: http.RequestOptions) => void;

/**
 * Makes a keep-alive http agent send the requests to proxied hosts to an http:// proxy in absolute form. The request
 * line's path becomes the absolute URL (ClientRequest renders its head lazily, on the first write or end, so the path
 * set here is the one on the wire), and the connection is asked for with the proxy's host and port, so the pool keeps
 * the proxy's sockets under one name, shared by every proxied target. Other hosts go direct as before.
 */
function forwarding(agent: http.Agent, proxy: URL, proxied: (host: string, port: number) => boolean, forwarded: WeakSet<http.ClientRequest>): http.Agent {
  const addRequest = (agent as unknown as { addRequest: AddRequest }).addRequest.bind(agent);
  const endpoint = proxyEndpoint(proxy);
  const authorization =
    proxy.username || proxy.password
      ? `Basic ${Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString('base64')}`
      : undefined;
  (agent as unknown as { addRequest: AddRequest }).addRequest = (request, options) => {
    const host = String(options.host ?? options.hostname ?? 'localhost');
    const port = Number(options.port ?? 80);
    if (!proxied(host, port)) {
      addRequest(request, options);
      return;
    }
    const origin = request.path;
    request.path = absoluteForm(host, port, origin);
    const rendered = request as unknown as RenderedRequest;
    if (typeof rendered._header === 'string') {
      // The head is rendered already when the request was given its headers as an array, or waits for `100 Continue`
      // (Expect, as the S3 SDK sends with a body; then the head is queued for the socket too): its request line is
      // rewritten in place, and the credentials added.
      if (
        !rewriteHead(
          rendered,
          `${request.method} ${origin} HTTP/1.1\r\n`,
          `${request.method} ${request.path} HTTP/1.1\r\n${authorization ? `Proxy-Authorization: ${authorization}\r\n` : ''}`,
        )
      ) {
        request.destroy(new Error('the request could not be rewritten for the proxy'));
        return;
      }
    } else if (authorization) {
      request.setHeader('proxy-authorization', authorization);
    }
    forwarded.add(request);
    addRequest(request, { ...options, host: endpoint.host, hostname: endpoint.host, port: endpoint.port });
  };
  return agent;
}

export interface ProxyAgents {
  /** For http:// targets. */
  readonly http: http.Agent;
  /** For https:// targets. */
  readonly https: https.Agent;
  /** The proxy a request to `url` goes through (credentials included: redact before showing it), or undefined. */
  proxyFor(url: URL): URL | undefined;
  /**
   * Whether this request was sent to the proxy in absolute form (an http:// target behind an http:// proxy): its
   * response then comes from the proxy, a 407 included, rather than from inside a tunnel.
   */
  forwarded(request: http.ClientRequest | undefined): boolean;
  destroy(): void;
}

export interface ProxyAgentOptions {
  /** How long the proxy may take to open a tunnel, in ms (default 10 s). */
  connectTimeoutMs?: number;
  /** Sockets per host, as http.Agent's maxSockets (default unlimited). */
  maxSockets?: number;
  /** Keep connections for later requests (default true); false opens one per request and closes it after. */
  keepAlive?: boolean;
}

/**
 * The agents for one client: keep-alive pools whose connections go through the proxies the settings (by default the
 * environment) name, except for NO_PROXY hosts. Without a proxy they are plain keep-alive agents.
 */
export function createProxyAgents(settings: ProxySettings = proxySettingsFromEnv(), options: ProxyAgentOptions = {}): ProxyAgents {
  expectOptions('createProxyAgents', settings, 'settings');
  expectOptions('createProxyAgents', options);
  const bypass = noProxyMatcher(settings.noProxy);
  const httpProxy = settings.httpProxy ? parseProxyUrl(settings.httpProxy, 'HTTP_PROXY') : undefined;
  const httpsProxy = settings.httpsProxy ? parseProxyUrl(settings.httpsProxy, 'HTTPS_PROXY') : undefined;
  const timeout = options.connectTimeoutMs ?? 10_000;
  const keepAlive = options.keepAlive ?? true;
  const poolOptions = { keepAlive, ...(keepAlive ? { timeout: idleConnectionMs } : {}), ...(options.maxSockets ? { maxSockets: options.maxSockets } : {}) };
  // hpagent's agents are used for their CONNECT only: the sockets live in the routing agents' pools. hpagent bounds the
  // CONNECT exchange with the proxy by the connection's `timeout`, given here.
  const tunnel = (agent: http.Agent | undefined): Tunnel | undefined => {
    if (!agent) return undefined;
    const connect = (agent as unknown as https.Agent).createConnection.bind(agent);
    return (connection, callback) => connect({ ...connection, timeout: connection.timeout || timeout }, callback);
  };
  const httpProxyAgent = httpProxy?.protocol === 'https:' ? new HttpProxyAgent({ proxy: httpProxy, keepAlive: true }) : undefined;
  const httpsProxyAgent = httpsProxy ? new HttpsProxyAgent({ proxy: httpsProxy, keepAlive: true }) : undefined;
  const httpTunnel = tunnel(httpProxyAgent);
  const httpsTunnel = tunnel(httpsProxyAgent);
  const forwarded = new WeakSet<http.ClientRequest>();
  const httpAgent =
    httpProxy?.protocol === 'http:'
      ? forwarding(applyConnectionPolicy(new http.Agent(poolOptions)), httpProxy, (host, port) => !bypass(host, port), forwarded)
      : routed(applyConnectionPolicy(new http.Agent(poolOptions)), 80, (host, port) => (httpTunnel && !bypass(host, port) ? httpTunnel : undefined));
  const httpsAgent = routed(applyConnectionPolicy(new https.Agent(poolOptions)), 443, (host, port) =>
    httpsTunnel && !bypass(host, port) ? httpsTunnel : undefined,
  );
  return {
    http: httpAgent,
    https: httpsAgent,
    proxyFor(url) {
      const proxy = url.protocol === 'https:' ? httpsProxy : url.protocol === 'http:' ? httpProxy : undefined;
      if (!proxy) return undefined;
      const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
      return bypass(url.hostname, port) ? undefined : proxy;
    },
    forwarded(request) {
      return request !== undefined && forwarded.has(request);
    },
    destroy() {
      httpAgent.destroy();
      httpsAgent.destroy();
      httpProxyAgent?.destroy();
      httpsProxyAgent?.destroy();
    },
  };
}

/** How a proxy is named in messages: scheme, host and port, never its credentials. */
export function describeProxy(proxy: URL): string {
  return `${proxy.protocol}//${proxy.host}`;
}
