import { expectObject, expectOptions, expectString } from '../arguments.js';
import { ExitCode, GantryError, UsageError } from '../errors.js';
import { createHttpClient, ProtocolError, redactUrl, type HttpClient, type RetryPolicy } from '../http/index.js';
import { getLogger, type Logger } from '../log.js';
import { optionKeys, refuseUnknownOptions } from '../settings.js';
import { defaultRegistryHost, modulePackage, normaliseHost, toModuleAddress, type ModuleAddress } from './address.js';
import { createTokenSource, type TokenSource } from './credentials.js';
import { Discovery, type DiscoveryCache, type RegistryServices } from './discovery.js';
import { registryRetryPolicy } from './retry.js';
import type { DownloadsSummary, ListOptions, ModuleDetail, ModulePage, ModuleRecord, SearchOptions, VersionsResponse } from './types.js';
import type { RegistryErrorCode } from './errors.js';

export interface RegistryClientOptions {
  env?: NodeJS.ProcessEnv;
  /** Tokens per host, matched exactly and preferred over the environment. */
  tokens?: Record<string, string>;
  /** Read `credentials` blocks of Terraform's CLI configuration after the variables (default true). */
  terraformConfig?: boolean;
  http?: HttpClient;
  retry?: RetryPolicy;
  /** A persistent discovery cache (the command uses one on disk). */
  discoveryCache?: DiscoveryCache;
  logger?: Logger;
}

const registryClientOptionKeys = optionKeys<RegistryClientOptions>({
  env: true,
  tokens: true,
  terraformConfig: true,
  http: true,
  retry: true,
  discoveryCache: true,
  logger: true,
});

/** Where a version's source is, as the registry said (REG-EP-DOWNLOAD). */
export interface DownloadLocation {
  /** The raw location string (X-Registry-Get, or `location` of a JSON body). */
  location: string;
  /** The final URL of the download endpoint, for resolving relative locations (REG-DL-XGET-RELATIVE). */
  downloadUrl: string;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const seg = encodeURIComponent;
const maxPages = 10_000;

/**
 * A typed client for every endpoint of the module registry API, on the one HTTP core. Discovery runs once per host;
 * the host's token is sent to discovery and to its registry API, and never anywhere else.
 */
export class RegistryClient {
  readonly http: HttpClient;
  readonly discovery: Discovery;
  readonly tokens: TokenSource;
  private readonly ownsHttp: boolean;
  private readonly retry: RetryPolicy;
  private readonly env: NodeJS.ProcessEnv;
  private readonly logger: Logger;

  constructor(options: RegistryClientOptions = {}) {
    expectOptions('new RegistryClient', options);
    refuseUnknownOptions('new RegistryClient', options, registryClientOptionKeys);
    if (options.env !== undefined) expectObject('new RegistryClient', 'options.env', options.env);
    if (options.tokens !== undefined) expectObject('new RegistryClient', 'options.tokens', options.tokens, 'an object mapping hosts to tokens');
    this.env = options.env ?? process.env;
    this.logger = options.logger ?? getLogger();
    this.ownsHttp = options.http === undefined;
    this.http = options.http ?? createHttpClient({ logger: this.logger, maxRedirects: 10 });
    this.retry = options.retry ?? registryRetryPolicy;
    this.tokens = createTokenSource(this.env, options.tokens, {
      ...(options.terraformConfig === undefined ? {} : { terraformConfig: options.terraformConfig }),
      note: (message) => this.logger.debug(message),
    });
    this.discovery = new Discovery({
      http: this.http,
      tokens: this.tokens,
      retry: this.retry,
      env: this.env,
      ...(options.discoveryCache ? { cache: options.discoveryCache } : {}),
    });
  }

  close(): void {
    if (this.ownsHttp) this.http.close();
  }

  /** The default host for calls that take none: GANTRY_REGISTRY_HOST or the public registry. */
  defaultHost(): string {
    return defaultRegistryHost(this.env);
  }

  services(host: string): Promise<RegistryServices> {
    return this.discovery.services(normaliseHost(host));
  }

  /** Authorization headers for a URL: the registry host's token, only when the URL is on that very host. */
  headersFor(registryHost: string, url: URL): Record<string, string> {
    expectString('RegistryClient.headersFor', 'registryHost', registryHost, 'a normalised registry host');
    if (!(url instanceof URL)) expectObject('RegistryClient.headersFor', 'url', null, 'a URL object');
    const token = this.tokens.tokenFor(registryHost);
    if (!token) return {};
    const port = url.port || (url.protocol === 'https:' ? '' : '80');
    const urlHost = port && !(url.protocol === 'https:' && port === '443') ? `${url.hostname}:${port}` : url.hostname;
    return urlHost.toLowerCase() === registryHost ? { authorization: `Bearer ${token}` } : {};
  }

  private async get<T>(host: string, url: URL, what: string): Promise<T> {
    const token = this.tokens.tokenFor(host);
    const response = await this.http.request<unknown>({ url, retry: this.retry, headers: token ? { authorization: `Bearer ${token}` } : {} });
    if (!isObject(response.body))
      throw new ProtocolError(`${what}: ${redactUrl(url)} answered with ${response.body === undefined ? 'an empty body' : 'JSON that is not an object'}`);
    return response.body as T;
  }

  private async v1(host: string, path: string): Promise<URL> {
    const { modulesV1 } = await this.services(host);
    return new URL(path, modulesV1);
  }

  /**
   * Pages of `{meta, modules[]}`, following `meta.next_offset` with the applied `meta.limit` (REG-META-*), through the
   * core's paging (got's pagination terms: each page one item here, the next page's URL from its meta).
   */
  async *pages(
    host: string,
    path: string,
    params: Record<string, string | number | undefined>,
    what: string,
    offset = 0,
    limit?: number,
  ): AsyncGenerator<ModulePage> {
    const base = await this.v1(host, path);
    const pageUrl = (pageOffset: number, pageLimit: number | undefined) => {
      const url = new URL(base);
      for (const [name, value] of Object.entries({ ...params, offset: pageOffset || undefined, limit: pageLimit })) {
        if (value !== undefined && String(value) !== '') url.searchParams.set(name, String(value));
      }
      return url;
    };
    const token = this.tokens.tokenFor(host);
    let currentOffset = offset;
    let currentLimit = limit;
    yield* this.http.paginate<ModulePage>({
      url: pageUrl(currentOffset, currentLimit),
      retry: this.retry,
      headers: token ? { authorization: `Bearer ${token}` } : {},
      requestLimit: maxPages,
      transform: (response) => {
        const { body } = response;
        if (!isObject(body))
          throw new ProtocolError(`${what}: ${redactUrl(response.url)} answered with ${body === undefined ? 'an empty body' : 'JSON that is not an object'}`);
        if (!Array.isArray(body.modules)) throw new ProtocolError(`${what}: ${redactUrl(response.url)} answered without a "modules" array`);
        const meta = (isObject(body.meta) ? body.meta : {}) as ModulePage['meta'];
        return [{ meta, modules: body.modules.filter(isObject) as unknown as ModuleRecord[] }];
      },
      paginate: ({ currentItems }) => {
        const meta = currentItems[0]?.meta ?? {};
        const next = meta.next_offset;
        // next_url is not followed: it may be absent, relative or malformed (AMB-09); next_offset is the contract.
        if (typeof next !== 'number' || !Number.isInteger(next) || next <= currentOffset) return false;
        if (typeof meta.limit === 'number' && Number.isInteger(meta.limit) && meta.limit > 0) currentLimit = meta.limit;
        currentOffset = next;
        return { url: pageUrl(currentOffset, currentLimit) };
      },
    });
  }

  private async *items(pages: AsyncGenerator<ModulePage>, max: number | undefined): AsyncGenerator<ModuleRecord> {
    let count = 0;
    for await (const page of pages) {
      for (const item of page.modules) {
        if (max !== undefined && count >= max) return;
        count += 1;
        yield item;
      }
    }
  }

  /** REG-EP-LIST-MODULES: every module, or one namespace's; `verified` filters only when true. */
  listModules(options: ListOptions & { host?: string } = {}): AsyncGenerator<ModuleRecord> {
    expectOptions('RegistryClient.listModules', options);
    const host = normaliseHost(options.host ?? this.defaultHost());
    const path = options.namespace ? `${seg(options.namespace)}` : '';
    const params = { provider: options.provider, verified: options.verified ? 'true' : undefined };
    return this.items(this.pages(host, path, params, 'listing modules', options.offset, options.limit), options.max);
  }

  /** REG-EP-SEARCH: `q` is required; its syntax is the registry's. */
  search(options: SearchOptions & { host?: string }): AsyncGenerator<ModuleRecord> {
    expectObject('RegistryClient.search', 'options', options, 'an object with a query');
    if (typeof options.query !== 'string' || options.query.trim() === '')
      throw new UsageError('a search needs a query: options.query must be a non-empty string');
    const host = normaliseHost(options.host ?? this.defaultHost());
    const params = { q: options.query, provider: options.provider, namespace: options.namespace, verified: options.verified ? 'true' : undefined };
    return this.items(this.pages(host, 'search', params, 'searching modules', options.offset, options.limit), options.max);
  }

  /** REG-EP-LATEST-ALL-PROVIDERS: the latest version of a module for each provider. */
  latestForAllProviders(
    host: string,
    namespace: string,
    name: string,
    options: { limit?: number; offset?: number; max?: number } = {},
  ): AsyncGenerator<ModuleRecord> {
    expectString('RegistryClient.latestForAllProviders', 'namespace', namespace);
    expectString('RegistryClient.latestForAllProviders', 'name', name);
    expectOptions('RegistryClient.latestForAllProviders', options);
    return this.items(
      this.pages(normaliseHost(host), `${seg(namespace)}/${seg(name)}`, {}, `reading ${namespace}/${name}`, options.offset, options.limit),
      options.max,
    );
  }

  /** REG-EP-LIST-VERSIONS: the versions of one module (the first element of `modules` is the one asked for). */
  async versions(address: ModuleAddress | string): Promise<string[]> {
    address = toModuleAddress(address, this.env);
    const url = await this.v1(address.host, `${seg(address.namespace)}/${seg(address.name)}/${seg(address.provider)}/versions`);
    const body = await this.get<VersionsResponse>(address.host, url, `listing versions of ${modulePackage(address)}`);
    const first = Array.isArray(body.modules) ? body.modules[0] : undefined;
    if (!isObject(first) || !Array.isArray(first.versions)) {
      throw new ProtocolError(`listing versions of ${modulePackage(address)}: ${redactUrl(url)} answered without modules[0].versions`);
    }
    return first.versions.map((item) =>
      isObject(item) && typeof item.version === 'string' ? item.version : String((item as { version?: unknown })?.version ?? item),
    );
  }

  /** The raw versions response, for callers that want dependencies too. */
  async versionsResponse(address: ModuleAddress | string): Promise<VersionsResponse> {
    address = toModuleAddress(address, this.env);
    const url = await this.v1(address.host, `${seg(address.namespace)}/${seg(address.name)}/${seg(address.provider)}/versions`);
    return this.get<VersionsResponse>(address.host, url, `listing versions of ${modulePackage(address)}`);
  }

  /** REG-EP-LATEST-ONE-PROVIDER: module detail of the latest version. */
  async latest(address: ModuleAddress | string): Promise<ModuleDetail> {
    address = toModuleAddress(address, this.env);
    const url = await this.v1(address.host, `${seg(address.namespace)}/${seg(address.name)}/${seg(address.provider)}`);
    return this.get<ModuleDetail>(address.host, url, `reading ${modulePackage(address)}`);
  }

  /** REG-EP-SPECIFIC-VERSION: module detail of one version. */
  async version(address: ModuleAddress | string, version: string): Promise<ModuleDetail> {
    address = toModuleAddress(address, this.env);
    expectString('RegistryClient.version', 'version', version, 'a version string as the registry lists it');
    const url = await this.v1(address.host, `${seg(address.namespace)}/${seg(address.name)}/${seg(address.provider)}/${seg(version)}`);
    return this.get<ModuleDetail>(address.host, url, `reading ${modulePackage(address)} ${version}`);
  }

  /**
   * REG-EP-DOWNLOAD: 204 with `X-Registry-Get`; a 200 whose JSON body has `location` (as OpenTofu's registry answers)
   * is accepted too — the body first, the header as fallback.
   */
  async download(address: ModuleAddress | string, version: string): Promise<DownloadLocation> {
    address = toModuleAddress(address, this.env);
    expectString('RegistryClient.download', 'version', version, 'a version string as the registry lists it');
    const url = await this.v1(address.host, `${seg(address.namespace)}/${seg(address.name)}/${seg(address.provider)}/${seg(version)}/download`);
    return this.readDownload(address, url, `downloading ${modulePackage(address)} ${version}`);
  }

  /** REG-EP-DOWNLOAD-LATEST: follows the 302/307 to the latest version's download endpoint. */
  async downloadLatest(address: ModuleAddress | string): Promise<DownloadLocation & { version: string | undefined }> {
    address = toModuleAddress(address, this.env);
    const url = await this.v1(address.host, `${seg(address.namespace)}/${seg(address.name)}/${seg(address.provider)}/download`);
    const result = await this.readDownload(address, url, `downloading the latest ${modulePackage(address)}`);
    const match = /\/([^/]+)\/download$/.exec(new URL(result.downloadUrl).pathname);
    const version = match && result.downloadUrl !== url.toString() ? decodeURIComponent(match[1] as string) : undefined;
    return { ...result, version };
  }

  private async readDownload(address: ModuleAddress, url: URL, what: string): Promise<DownloadLocation> {
    const token = this.tokens.tokenFor(address.host);
    const response = await this.http.request<string>({
      url,
      responseType: 'text',
      accept: [200, 204],
      retry: this.retry,
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    let location: string | undefined;
    if (response.status === 200 && response.body.trim() !== '') {
      try {
        const body = JSON.parse(response.body) as unknown;
        if (isObject(body) && typeof body.location === 'string' && body.location.trim() !== '') location = body.location;
      } catch {
        // Not JSON: fall back to the header.
      }
    }
    const header = response.headers['x-registry-get'];
    location ??= Array.isArray(header) ? header[0] : header;
    if (location === undefined || location.trim() === '') {
      throw new ProtocolError(
        `${what}: ${redactUrl(response.url || url)} answered ${response.status} without an X-Registry-Get header or a "location"`,
        'the registry did not say where the module source is; report this to the registry operator',
      );
    }
    return { location: location.trim(), downloadUrl: response.url || url.toString() };
  }

  /** REG-EP-DOWNLOADS-SUMMARY: download counts from the v2 API. */
  async downloadsSummary(address: ModuleAddress | string): Promise<DownloadsSummary> {
    address = toModuleAddress(address, this.env);
    const { modulesV2 } = await this.services(address.host);
    if (!modulesV2)
      throw new GantryError(`${address.host} publishes no v2 module API for download metrics`, {
        code: 'NO_V2_API' satisfies RegistryErrorCode,
        exitCode: ExitCode.checkFailed,
      });
    const url = new URL(`${seg(address.namespace)}/${seg(address.name)}/${seg(address.provider)}/downloads/summary`, modulesV2);
    const body = await this.get<DownloadsSummary>(address.host, url, `reading download metrics of ${modulePackage(address)}`);
    if (!isObject(body.data) || !isObject(body.data.attributes))
      throw new ProtocolError(`reading download metrics: ${redactUrl(url)} answered without data.attributes`);
    return body;
  }
}
