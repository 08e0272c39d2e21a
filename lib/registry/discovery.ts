import { expectOptions, expectString } from '../arguments.js';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { GantryError, ExitCode, type ExitCodeValue } from '../errors.js';
import { writeFileAtomic } from '../atomic-write.js';
import { ensureFolder } from '../local-paths.js';
import { HttpError, NetworkError, ProtocolError, redactUrl, type HttpClient, type RetryPolicy } from '../http/index.js';
import { plainHttpAllowed } from './plain-http.js';
import type { TokenSource } from './credentials.js';

/** REG-SD-SERVICE-ID: the service identifier Gantry looks up. */
export const moduleServiceId = 'modules.v1';
const discoveryPath = '/.well-known/terraform.json';
const maxDiscoveryBytes = 1024 * 1024;
const maxDiscoveryRedirects = 3;

export interface RegistryServices {
  host: string;
  /** REG-BASE-V1: the module API base, always ending in `/`. */
  modulesV1: string;
  /** REG-BASE-V2: the v2 metrics base (from `modules.v2`, else derived from a `/v1/modules/` base), ending in `/`. */
  modulesV2: string | undefined;
}

/** Each way service discovery ends, and its exit code: a host that is no module registry is 2, a failed discovery 3. */
export const discoveryErrorCodes = {
  DISCOVERY_FAILED: ExitCode.remote,
  DISCOVERY_INVALID: ExitCode.remote,
  NO_MODULE_REGISTRY: ExitCode.usage,
} as const satisfies Record<string, ExitCodeValue>;
export type DiscoveryErrorCode = keyof typeof discoveryErrorCodes;

export class DiscoveryError extends GantryError {
  declare readonly code: DiscoveryErrorCode;
  constructor(message: string, options: { hint?: string; code: DiscoveryErrorCode; cause?: unknown }) {
    super(message, { code: options.code, exitCode: discoveryErrorCodes[options.code], hint: options.hint, cause: options.cause });
  }
}

/** A persistent cache of discovery results, for the command (the library keeps them in memory only). */
export interface DiscoveryCache {
  get(host: string): Promise<RegistryServices | undefined>;
  set(host: string, services: RegistryServices): Promise<void>;
}

/** The default folder for Gantry's caches: `GANTRY_CACHE_DIR`, else `$XDG_CACHE_HOME/gantry`, else `~/.cache/gantry`. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  expectOptions('defaultCacheDir', env, 'env');
  return env.GANTRY_CACHE_DIR || join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'gantry');
}

/** One JSON file per host under `<dir>/discovery/`, valid for `ttlMs`; unreadable entries count as absent. */
export function createFileDiscoveryCache(dir: string, ttlMs: number): DiscoveryCache {
  expectString('createFileDiscoveryCache', 'dir', dir, 'the path of the cache folder');
  if (typeof ttlMs !== 'number' || Number.isNaN(ttlMs)) expectString('createFileDiscoveryCache', 'ttlMs', null, 'a number of milliseconds');
  const folder = join(dir, 'discovery');
  const fileFor = (host: string) => join(folder, `${host.replace(/[^a-z0-9.-]/g, '_')}.json`);
  return {
    async get(host) {
      if (ttlMs <= 0) return undefined;
      try {
        const entry = JSON.parse(await readFile(fileFor(host), 'utf8')) as { storedAt?: unknown; services?: RegistryServices };
        if (typeof entry.storedAt !== 'number' || Date.now() - entry.storedAt > ttlMs) return undefined;
        const services = entry.services;
        if (!services || services.host !== host || typeof services.modulesV1 !== 'string' || !/^https?:\/\//.test(services.modulesV1)) return undefined;
        return services;
      } catch {
        return undefined;
      }
    },
    async set(host, services) {
      if (ttlMs <= 0) return;
      const file = fileFor(host);
      try {
        // A cache that cannot be written is no cache, never a failure (nor a hang: no recursive mkdir, see ensureFolder).
        await ensureFolder(folder, 'the discovery cache folder');
        await writeFileAtomic(file, `${JSON.stringify({ storedAt: Date.now(), services })}\n`);
      } catch {
        // nothing kept: the next run asks the registry again
      }
    },
  };
}

export interface DiscoveryOptions {
  http: HttpClient;
  tokens: TokenSource;
  retry?: RetryPolicy;
  cache?: DiscoveryCache;
  env?: NodeJS.ProcessEnv;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Resolves a service URL from the document against the document's final URL; http(s) only, no userinfo. */
export function resolveServiceUrl(value: unknown, documentUrl: string, host: string, key: string, env?: NodeJS.ProcessEnv): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new DiscoveryError(`the discovery document of ${host} has a ${key} that is not a URL string`, { code: 'DISCOVERY_INVALID' });
  }
  let url: URL;
  try {
    url = new URL(value, documentUrl);
  } catch {
    throw new DiscoveryError(`the discovery document of ${host} has an invalid ${key} URL "${value}"`, { code: 'DISCOVERY_INVALID' });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new DiscoveryError(`the ${key} URL of ${host} uses ${url.protocol}, not http or https`, { code: 'DISCOVERY_INVALID' });
  }
  if (url.username || url.password)
    throw new DiscoveryError(`the ${key} URL of ${host} carries credentials, which Gantry refuses`, { code: 'DISCOVERY_INVALID' });
  if (url.protocol === 'http:' && !plainHttpAllowed(url, env)) {
    throw new DiscoveryError(`the ${key} URL of ${host} uses plain http`, {
      code: 'DISCOVERY_INVALID',
      hint: 'only loopback hosts, or hosts opted in with GANTRY_REGISTRY_ALLOW_HTTP, may use plain http',
    });
  }
  url.hash = '';
  // REG-SD-TRAILING-SLASH: endpoint paths are appended to it.
  if (!url.pathname.endsWith('/')) url.pathname = `${url.pathname}/`;
  return url.toString();
}

/**
 * Service discovery (terraform-svchost's disco): `GET https://<host>/.well-known/terraform.json`, at most 3
 * redirects, at most 1 MiB, JSON object required. Results are cached per host in the process (concurrent lookups of
 * one host share one request) and, when a cache is given, on disk.
 */
export class Discovery {
  private readonly inProcess = new Map<string, Promise<RegistryServices>>();

  constructor(private readonly options: DiscoveryOptions) {}

  /** The registry's module services for a normalised host. */
  services(host: string): Promise<RegistryServices> {
    let pending = this.inProcess.get(host);
    if (!pending) {
      pending = this.lookup(host);
      this.inProcess.set(host, pending);
      pending.catch(() => this.inProcess.delete(host));
    }
    return pending;
  }

  /** Forgets every cached result of this process. */
  forget(): void {
    this.inProcess.clear();
  }

  private async lookup(host: string): Promise<RegistryServices> {
    const cached = await this.options.cache?.get(host);
    if (cached) return cached;
    const services = await this.fetch(host);
    await this.options.cache?.set(host, services);
    return services;
  }

  private async fetch(host: string): Promise<RegistryServices> {
    const env = this.options.env;
    const httpsUrl = new URL(`https://${host}${discoveryPath}`);
    const httpFallback = plainHttpAllowed(httpsUrl, env);
    try {
      return await this.fetchFrom(host, httpsUrl);
    } catch (error) {
      // A loopback or opted-in registry may speak plain http: try it once when https could not even connect.
      if (httpFallback && error instanceof NetworkError) return this.fetchFrom(host, new URL(`http://${host}${discoveryPath}`));
      throw error;
    }
  }

  private async fetchFrom(host: string, url: URL): Promise<RegistryServices> {
    const token = this.options.tokens.tokenFor(host);
    let response;
    try {
      response = await this.options.http.request<string>({
        url,
        responseType: 'text',
        headers: { accept: 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        accept: [200, 404],
        maxRedirects: maxDiscoveryRedirects,
        maxBodyBytes: maxDiscoveryBytes,
        ...(this.options.retry ? { retry: this.options.retry } : {}),
      });
    } catch (error) {
      if (error instanceof HttpError) {
        throw new DiscoveryError(`service discovery for ${host} failed: ${error.message}`, { hint: error.hint, cause: error, code: 'DISCOVERY_FAILED' });
      }
      if (error instanceof ProtocolError && /larger than/.test(error.message)) {
        throw new DiscoveryError(`the discovery document of ${host} is larger than 1 MiB`, { code: 'DISCOVERY_INVALID', cause: error });
      }
      if (error instanceof NetworkError && error.errorCode === 'ERR_TOO_MANY_REDIRECTS') {
        throw new DiscoveryError(`service discovery for ${host} was redirected more than ${maxDiscoveryRedirects} times`, {
          code: 'DISCOVERY_INVALID',
          cause: error,
        });
      }
      throw error;
    }
    if (response.status === 404) {
      throw new DiscoveryError(`${host} offers no module registry: ${redactUrl(url)} answered 404`, {
        code: 'NO_MODULE_REGISTRY',
        hint: 'check the host part of the module address; a registry publishes /.well-known/terraform.json',
      });
    }
    const contentType = String(response.headers['content-type'] ?? '');
    const mediaType = contentType.split(';')[0]?.trim().toLowerCase();
    if (mediaType !== 'application/json') {
      throw new DiscoveryError(`the discovery document of ${host} is not JSON (Content-Type "${contentType || 'none'}")`, {
        code: 'DISCOVERY_INVALID',
        hint: 'the host answered with something else, often a web page or a proxy login; check the host',
      });
    }
    let document: unknown;
    try {
      document = JSON.parse(response.body);
    } catch {
      throw new DiscoveryError(`the discovery document of ${host} is not valid JSON`, { code: 'DISCOVERY_INVALID' });
    }
    if (!isObject(document)) throw new DiscoveryError(`the discovery document of ${host} is not a JSON object`, { code: 'DISCOVERY_INVALID' });
    if (!(moduleServiceId in document)) {
      throw new DiscoveryError(`${host} offers no module registry: its discovery document has no "${moduleServiceId}"`, { code: 'NO_MODULE_REGISTRY' });
    }
    const finalUrl = response.url || url.toString();
    const modulesV1 = resolveServiceUrl(document[moduleServiceId], finalUrl, host, moduleServiceId, this.options.env);
    let modulesV2: string | undefined;
    if (document['modules.v2'] !== undefined) modulesV2 = resolveServiceUrl(document['modules.v2'], finalUrl, host, 'modules.v2', this.options.env);
    else if (new URL(modulesV1).pathname.endsWith('/v1/modules/')) modulesV2 = modulesV1.replace(/\/v1\/modules\/$/, '/v2/modules/');
    return { host, modulesV1, modulesV2 };
  }
}
