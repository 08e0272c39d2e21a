import { expectOptions } from '../arguments.js';
import { createHttpClient, HttpError, NetworkError, registerSecret, type HttpClient, type RetryPolicy } from '../http/index.js';
import { describeJsonSyntaxProblem } from '../json-syntax.js';
import { optionKeys, refuseUnknownOptions } from '../settings.js';
import { getLogger, type Logger } from '../log.js';
import { resolveSecretsConfig, settings, type ResolvedSecretsConfig, type ResolveSources, type SecretsClientOptions } from './config.js';
import { SecretsConnectionError, SecretsError, SecretsNoTokenError, SecretsPathError } from './errors.js';
import { serializeWithinLimits } from './limits.js';
import { fullPath, joinNamespaces } from './namespace.js';
import { encodePath, encodeSegments, normaliseMount } from './paths.js';
import { isIdempotent, notSentErrorCodes, retriedStatuses, secretsRetryPolicy } from './retry.js';
import type { HelpResult, KvVersion, MountInfo, MountSummary, ResponseEnvelope, TokenInfo, WireAuth } from './types.js';
import { KvEngine, type KvEngineOptions } from './kv.js';
import { keysOf, type CallOptions, type CallResult } from './call.js';

export interface CreateSecretsClientOptions extends SecretsClientOptions {
  logger?: Logger;
  /** Where environment and Pulumi config are read from (tests; defaults to process.env and PULUMI_CONFIG). */
  sources?: ResolveSources;
}

const clientOptionKeys = optionKeys<CreateSecretsClientOptions>({
  address: true,
  token: true,
  namespace: true,
  caCert: true,
  caPath: true,
  clientCert: true,
  clientKey: true,
  skipVerify: true,
  tlsServerName: true,
  maxRetries: true,
  timeoutMs: true,
  tokenHeader: true,
  namespaceIn: true,
  retryWaitMinMs: true,
  retryWaitMaxMs: true,
  limits: true,
  logger: true,
  sources: true,
});

const listFallbackStatuses = new Set([400, 405, 501]);
const notRetried = (status: number) => !(retriedStatuses as readonly number[]).includes(status);

/**
 * A client of the secrets service. One per address and token; it keeps the token in memory only (a private field:
 * not enumerable, not serialized, never logged), caches mount versions, and sends every request through lib/http.
 */
export class SecretsClient {
  readonly config: Readonly<Omit<ResolvedSecretsConfig, 'token'>>;
  #token: string | undefined;
  readonly #http: HttpClient;
  readonly #logger: Logger;
  readonly #mounts = new Map<string, MountInfo>();
  /** Detections under way, so concurrent first uses of a mount send one request. */
  readonly #detecting = new Map<string, Promise<MountInfo>>();
  #listWithGet = false;
  // The retry policies depend on the configuration and on whether the method is idempotent only: built once.
  readonly #idempotentPolicy: RetryPolicy;
  readonly #writePolicy: RetryPolicy;
  readonly #firstListPolicy: RetryPolicy;

  constructor(options: CreateSecretsClientOptions = {}) {
    expectOptions('SecretsClient', options);
    refuseUnknownOptions('SecretsClient', options, clientOptionKeys);
    const { token, ...config } = resolveSecretsConfig(options, options.sources);
    this.config = Object.freeze(config);
    this.#token = token;
    this.#logger = options.logger ?? getLogger();
    this.#idempotentPolicy = secretsRetryPolicy(config, 'GET');
    this.#writePolicy = secretsRetryPolicy(config, 'POST');
    // A server that does not know the LIST method may drop the connection: fall back at once instead of retrying.
    this.#firstListPolicy = { ...secretsRetryPolicy(config, 'LIST'), errorCodes: [] };
    const settingSource = (key: keyof typeof settings): string | undefined => {
      const origin = config.sources[key];
      if (origin === 'option') return options.sources?.optionNames?.[key] ?? `option ${key}`;
      if (origin === 'environment') return settings[key].env;
      if (origin === 'pulumi') return settings[key].pulumi;
      return undefined;
    };
    this.#http = createHttpClient({
      baseUrl: `${config.address}/v1/`,
      // SEC-AUTH-CLIENTS-SEND-REQUEST-HEADER: always sent, so proxies with require_request_header accept us.
      headers: { 'x-secrets-request': 'true' },
      timeouts: { response: config.timeoutMs, total: config.timeoutMs },
      tls: {
        ...(config.caCert ? { caFile: config.caCert } : {}),
        ...(config.caPath ? { caPath: config.caPath } : {}),
        ...(config.clientCert ? { certFile: config.clientCert } : {}),
        ...(config.clientKey ? { keyFile: config.clientKey } : {}),
        ...(config.tlsServerName ? { serverName: config.tlsServerName } : {}),
        skipVerify: config.skipVerify,
        // A message about a TLS file names the flag, variable or Pulumi setting the path came from.
        sources: {
          caFile: settingSource('caCert'),
          caPath: settingSource('caPath'),
          certFile: settingSource('clientCert'),
          keyFile: settingSource('clientKey'),
        },
      },
      logger: this.#logger,
      // The secrets service never redirects API calls in a way a client should follow with its token.
      maxRedirects: 0,
    });
  }

  /** True when a token is set (from options, SECRETS_TOKEN, Pulumi config, or a login). */
  get authenticated(): boolean {
    return this.#token !== undefined;
  }

  /** Use this token from now on (kept in memory only). */
  setToken(token: string | undefined): void {
    registerSecret(token);
    this.#token = token === '' ? undefined : token;
  }

  /** The token itself, for a caller that must hand it on (`gantry secrets login --token-only`). Never log it. */
  revealToken(): string | undefined {
    return this.#token;
  }

  toJSON(): Record<string, unknown> {
    return { address: this.config.address, namespace: this.config.namespace, authenticated: this.authenticated };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `SecretsClient ${JSON.stringify(this.toJSON())}`;
  }

  close(): void {
    this.#http.close();
  }

  /** A kv engine at `mount`. The kv version is detected on first use and cached, unless `kvVersion` is given. */
  kv(mount: string, options: KvEngineOptions = {}): KvEngine {
    return new KvEngine(this, normaliseMount(mount), options);
  }

  /** One request, with retries, typed errors and the envelope parsed. The building block of every operation. */
  async call<Data = Record<string, unknown>>(options: CallOptions): Promise<CallResult<Data>> {
    if (options.method === 'LIST' && this.#listWithGet) return this.call({ ...options, method: 'GET', query: { ...options.query, list: 'true' } });
    const namespace = joinNamespaces(this.config.namespace, options.namespace);
    const headers: Record<string, string | undefined> = {};
    // SEC-NS-EQUIVALENCE: the namespace in the header, or (namespaceIn: 'path') in front of the path.
    let path = options.path;
    if (namespace && this.config.namespaceIn === 'path') path = `${encodeSegments(namespace.split('/').filter(Boolean))}/${path}`;
    else if (namespace) headers['x-secrets-namespace'] = namespace;
    if (options.authenticated !== false) {
      // Without a token the service can only say 403, and the mount detection would blame the path: say what is missing.
      if (this.#token === undefined) throw new SecretsNoTokenError(`${options.method} /v1/${path}`);
      if (this.config.tokenHeader === 'authorization') headers.authorization = `Bearer ${this.#token}`;
      else headers['x-secrets-token'] = this.#token;
    }
    let body: string | undefined;
    if (options.body !== undefined) {
      body = serializeWithinLimits(options.body, this.config.limits);
      headers['content-type'] = options.contentType ?? 'application/json';
    }
    const firstListAttempt = options.method === 'LIST';
    const policy = firstListAttempt ? this.#firstListPolicy : isIdempotent(options.method) ? this.#idempotentPolicy : this.#writePolicy;
    const description = { method: options.method, path, namespace };
    let response;
    try {
      response = await this.#http.request<unknown>({
        method: options.method,
        url: path,
        ...(options.query ? { searchParams: options.query } : {}),
        headers,
        ...(body !== undefined ? { body } : {}),
        // Parsed here: a proxy's HTML error page must become a SecretsError with its status, not a parse failure.
        responseType: 'text',
        // Every status the policy does not retry comes back here to be read; retried ones end as HttpError.
        accept: notRetried,
        retry: policy,
      });
    } catch (error) {
      if (firstListAttempt && error instanceof NetworkError) return this.#fallBackToGetList(options, error.errorCode);
      throw this.#translate(error, description);
    }
    const parsed = parseBody(response.body as string, response.status, description) as
      (ResponseEnvelope<Data> & { errors?: unknown; notJson?: boolean }) | undefined;
    // A server that does not route LIST answers 405 (or its HTTP parser a bare 400); the service itself explains a real error.
    if (firstListAttempt && listFallbackStatuses.has(response.status) && (!hasErrorStrings(parsed) || parsed?.notJson)) {
      return this.#fallBackToGetList(options, `status ${response.status}`);
    }
    const errors = Array.isArray(parsed?.errors) ? parsed.errors.map(String) : [];
    const warnings = Array.isArray(parsed?.warnings) ? parsed.warnings.map(String) : [];
    if (response.status >= 400 && !(response.status === 404 && options.allowNotFound)) {
      throw new SecretsError({ ...description, status: response.status, errors, warnings, attempts: response.attempts });
    }
    const envelope = parsed && typeof parsed === 'object' && 'data' in parsed ? parsed : undefined;
    return { status: response.status, envelope, body: parsed, warnings, errors };
  }

  #fallBackToGetList<Data>(options: CallOptions, why: string): Promise<CallResult<Data>> {
    this.#logger.debug(`the secrets service refused the LIST method (${why}); listing with GET ?list=true from now on`);
    this.#listWithGet = true;
    return this.call<Data>({ ...options, method: 'GET', query: { ...options.query, list: 'true' } });
  }

  #translate(error: unknown, description: { method: string; path: string; namespace: string | undefined }): unknown {
    if (error instanceof HttpError) {
      const body = error.body as { warnings?: unknown } | undefined;
      const warnings = Array.isArray(body?.warnings) ? body.warnings.map(String) : [];
      return new SecretsError({ ...description, status: error.status, errors: error.errors ?? [], warnings, attempts: error.attempts, cause: error });
    }
    if (error instanceof NetworkError) {
      const sentBefore = !(notSentErrorCodes as readonly string[]).includes(error.errorCode);
      const cause = error.cause instanceof Error ? error.cause.message : error.errorCode;
      return new SecretsConnectionError({
        ...description,
        attempts: error.attempts,
        errno: error.errorCode,
        maybeApplied: sentBefore && !isIdempotent(description.method),
        detail: `${error.errorCode}${cause && cause !== error.errorCode ? ` (${cause})` : ''}`,
        cause: error,
      });
    }
    return error;
  }

  // ---- generic logical operations (any engine) ----

  /** GET a path; undefined when it does not exist. */
  async read<Data = Record<string, unknown>>(
    path: string,
    options: { namespace?: string; query?: Record<string, string> } = {},
  ): Promise<ResponseEnvelope<Data> | undefined> {
    const result = await this.call<Data>({ method: 'GET', path: encodePath(path), allowNotFound: true, ...options });
    return result.status === 404 ? undefined : result.envelope;
  }

  /** POST a JSON object to a path. SEC-STATUS-204: 204 and 200-with-warnings are both a success. */
  async write<Data = Record<string, unknown>>(
    path: string,
    data: Record<string, unknown>,
    options: { namespace?: string; method?: 'POST' | 'PUT' } = {},
  ): Promise<CallResult<Data>> {
    return this.call<Data>({ method: options.method ?? 'POST', path: encodePath(path), body: data, namespace: options.namespace });
  }

  /** List keys under a directory; an empty or missing directory is [] (SEC-LIST-EMPTY-404). */
  async list(path: string, options: { namespace?: string } = {}): Promise<string[]> {
    const result = await this.call<{ keys?: unknown }>({
      method: 'LIST',
      path: encodePath(path, { directory: true }),
      allowNotFound: true,
      namespace: options.namespace,
    });
    return keysOf(result);
  }

  async delete(path: string, options: { namespace?: string } = {}): Promise<CallResult> {
    return this.call({ method: 'DELETE', path: encodePath(path), namespace: options.namespace });
  }

  /** SEC-EP-HELP: `GET <path>?help=1`, typed. Needs permission on the path (SEC-HELP-PERMISSION). */
  async help(path: string, options: { namespace?: string } = {}): Promise<HelpResult> {
    const trailing = path.endsWith('/');
    const encoded = encodePath(path, { directory: trailing });
    const result = await this.call({ method: 'GET', path: encoded, query: { help: '1' }, namespace: options.namespace });
    return parseHelp(result.body, path);
  }

  // ---- mounts ----

  /**
   * The mount holding `path` and its kv version, found as the Vault CLI does: `GET sys/internal/ui/mounts/<path>`
   * (`data.options.version`; no version means 1, and a 404 means a server too old to say, so 1). Cached per full path.
   */
  async mountInfo(path: string, options: { namespace?: string } = {}): Promise<MountInfo> {
    const namespace = joinNamespaces(this.config.namespace, options.namespace);
    const requested = fullPath(namespace, encodePath(path, { directory: true }));
    for (const [mountFull, info] of this.#mounts) {
      if (requested.startsWith(mountFull)) return info;
    }
    const pending = this.#detecting.get(requested);
    if (pending) return pending;
    const detection = this.#detect(path, namespace, options);
    this.#detecting.set(requested, detection);
    try {
      return await detection;
    } finally {
      this.#detecting.delete(requested);
    }
  }

  async #detect(path: string, namespace: string | undefined, options: { namespace?: string }): Promise<MountInfo> {
    const encoded = encodePath(path, { directory: true });
    let result: CallResult<{ path?: unknown; type?: unknown; options?: { version?: unknown } | null }>;
    try {
      result = await this.call({
        method: 'GET',
        path: `sys/internal/ui/mounts/${encoded.replace(/\/$/, '')}`,
        allowNotFound: true,
        namespace: options.namespace,
      });
    } catch (error) {
      if (error instanceof SecretsError && error.status === 403) {
        throw new SecretsError(
          {
            method: error.method,
            path: error.path,
            namespace: error.namespace,
            status: 403,
            errors: [...error.errors],
            warnings: [...error.warnings],
            attempts: error.attempts,
            cause: error,
          },
          {
            code: 'SECRETS_MOUNT_UNKNOWN',
            hint: `No mount holds "${path}", or the token is wrong, expired or lacks a policy for it (the service answers 403 to all three). Check the token and the mount (client.mounts() lists those the token may see), or pass kvVersion (and mount) to skip detection.`,
            cliHint: `No mount holds "${path}", or the token is wrong, expired or lacks a policy for it (the service answers 403 to all three). Check SECRETS_TOKEN (\`gantry secrets login token\`) and the mount (\`gantry secrets mounts\` lists those the token may see), or give --kv-version 1|2 (and --mount <mount>) to skip detection.`,
          },
        );
      }
      throw error;
    }
    const firstSegment = `${encoded.split('/')[0]}/`;
    if (result.status === 404 || !result.envelope?.data) {
      // A server too old to answer: kv v1 at the first segment, as the Vault CLI assumes.
      const info: MountInfo = { path: firstSegment, type: undefined, kvVersion: 1 };
      this.#mounts.set(fullPath(namespace, firstSegment), info);
      return info;
    }
    const data = result.envelope.data;
    const returned = typeof data.path === 'string' && data.path !== '' ? data.path : firstSegment;
    const mountPath = relativeMount(encoded, returned.endsWith('/') ? returned : `${returned}/`);
    const version = data.options && typeof data.options === 'object' ? String(data.options.version ?? '1') : '1';
    const info: MountInfo = { path: mountPath, type: typeof data.type === 'string' ? data.type : undefined, kvVersion: version === '2' ? 2 : 1 };
    this.#mounts.set(fullPath(namespace, mountPath), info);
    return info;
  }

  /**
   * The mounts the token may see, as `vault secrets list` shows them: `GET sys/mounts`, or, when the token may not
   * read that (403), `GET sys/internal/ui/mounts`, which lists the mounts the token has any capability on.
   */
  async mounts(options: { namespace?: string } = {}): Promise<MountSummary[]> {
    let table: Record<string, unknown> | undefined;
    try {
      const result = await this.call<Record<string, unknown>>({ method: 'GET', path: 'sys/mounts', ...options });
      table = result.envelope?.data ?? undefined;
    } catch (error) {
      if (!(error instanceof SecretsError) || error.status !== 403) throw error;
      const result = await this.call<{ secret?: Record<string, unknown> }>({ method: 'GET', path: 'sys/internal/ui/mounts', ...options });
      table = result.envelope?.data?.secret ?? undefined;
    }
    return Object.entries(table ?? {})
      .filter(([, value]) => value && typeof value === 'object')
      .map(([path, value]) => {
        const mount = value as { type?: unknown; description?: unknown; options?: { version?: unknown } | null };
        const type = typeof mount.type === 'string' ? mount.type : 'unknown';
        const version = mount.options && typeof mount.options === 'object' ? mount.options.version : undefined;
        return {
          path: path.endsWith('/') ? path : `${path}/`,
          type,
          kvVersion: type === 'kv' ? ((String(version ?? '1') === '2' ? 2 : 1) as KvVersion) : undefined,
          description: typeof mount.description === 'string' ? mount.description : '',
        };
      })
      .sort((a, b) => a.path.localeCompare(b.path));
  }

  /** Forget cached mount versions (after a mount was tuned or replaced). */
  forgetMounts(): void {
    this.#mounts.clear();
  }

  /**
   * Split `<mount>/<path>` at its mount. With `kvVersion` (or `mount`) given nothing is asked: the mount is the given
   * one, or the first segment. Otherwise the service says which mount holds the path.
   */
  async kvAt(
    path: string,
    options: { kvVersion?: KvVersion | undefined; mount?: string | undefined; namespace?: string | undefined } = {},
  ): Promise<{ kv: KvEngine; name: string }> {
    const clean = path.startsWith('/') ? path.slice(1) : path;
    const ns = options.namespace !== undefined ? { namespace: options.namespace } : {};
    if (options.mount) {
      const mount = normaliseMount(options.mount);
      return { kv: this.kv(mount, { ...ns, ...(options.kvVersion ? { kvVersion: options.kvVersion } : {}) }), name: clean };
    }
    if (options.kvVersion) {
      const slash = clean.indexOf('/');
      const mount = slash === -1 ? clean : clean.slice(0, slash);
      return { kv: this.kv(mount, { ...ns, kvVersion: options.kvVersion }), name: slash === -1 ? '' : clean.slice(slash + 1) };
    }
    const info = await this.mountInfo(clean, ns);
    const decodedMount = info.path.split('/').filter(Boolean).map(decodeURIComponent).join('/');
    const name = clean === decodedMount || `${clean}/` === `${decodedMount}/` ? '' : clean.slice(decodedMount.length + 1);
    if (!clean.startsWith(decodedMount)) throw new SecretsPathError(`the service says "${path}" is in mount "${info.path}", which is not a prefix of it`, path);
    return { kv: this.kv(decodedMount, { ...ns, kvVersion: info.kvVersion }), name };
  }

  // ---- authentication ----

  /** `auth/token/lookup-self`: checks the token and says what it may do. */
  async lookupSelf(): Promise<TokenInfo> {
    const result = await this.call<Record<string, unknown>>({ method: 'GET', path: 'auth/token/lookup-self' });
    return tokenInfoFromLookup(result.envelope?.data ?? {});
  }

  /** `auth/token/renew-self`, optionally asking for `increment` seconds. */
  async renewSelf(increment?: number): Promise<TokenInfo> {
    const result = await this.call({ method: 'POST', path: 'auth/token/renew-self', body: increment ? { increment } : {} });
    return this.#adoptAuth(result.envelope?.auth, false);
  }

  /** Use a token, after checking it with lookup-self. */
  async loginWithToken(token: string): Promise<TokenInfo> {
    registerSecret(token);
    const previous = this.#token;
    this.#token = token;
    try {
      return await this.lookupSelf();
    } catch (error) {
      this.#token = previous;
      throw error;
    }
  }

  /** `POST auth/<mount>/login/<username>` with the password in the body (never in the URL: SEC-PARAMS-QUERY-VS-BODY). */
  async loginUserpass(username: string, password: string, options: { mount?: string } = {}): Promise<TokenInfo> {
    const mount = normaliseMount(options.mount ?? 'userpass');
    // A service (or a proxy) echoing the body in an error must not put the password in our messages.
    registerSecret(password);
    const result = await this.call({
      method: 'POST',
      path: `auth/${mount}login/${encodePath(username, { what: 'username' })}`,
      body: { password },
      authenticated: false,
    });
    return this.#adoptAuth(result.envelope?.auth, true);
  }

  /** `POST auth/<mount>/login` with role_id and secret_id. */
  async loginAppRole(roleId: string, secretId: string | undefined, options: { mount?: string } = {}): Promise<TokenInfo> {
    const mount = normaliseMount(options.mount ?? 'approle');
    const body: Record<string, string> = { role_id: roleId };
    if (secretId !== undefined) body.secret_id = secretId;
    registerSecret(secretId);
    const result = await this.call({ method: 'POST', path: `auth/${mount}login`, body, authenticated: false });
    return this.#adoptAuth(result.envelope?.auth, true);
  }

  #adoptAuth(auth: WireAuth | null | undefined, login: boolean): TokenInfo {
    if (!auth || typeof auth.client_token !== 'string' || auth.client_token === '') {
      throw new SecretsError(
        {
          method: 'POST',
          path: login ? 'auth/.../login' : 'auth/token/renew-self',
          status: 200,
          errors: ['the response carried no auth.client_token'],
          warnings: [],
        },
        { code: 'SECRETS_LOGIN_NO_TOKEN' },
      );
    }
    // SEC-AUTH-LOGIN-JSON: the token is saved and sent on later requests.
    registerSecret(auth.client_token);
    this.#token = auth.client_token;
    return {
      accessor: auth.accessor,
      policies: auth.token_policies ?? auth.policies ?? [],
      ttl: auth.lease_duration ?? 0,
      renewable: auth.renewable ?? false,
      entityId: auth.entity_id || undefined,
      metadata: auth.metadata ?? {},
      displayName: undefined,
    };
  }
}

export function createSecretsClient(options: CreateSecretsClientOptions = {}): SecretsClient {
  expectOptions('createSecretsClient', options);
  return new SecretsClient(options);
}

function parseBody(text: string, status: number, description: { method: string; path: string; namespace: string | undefined }): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    if (status >= 400) return { errors: [`(not JSON) ${text.replace(/\s+/g, ' ').trim().slice(0, 200)}`], notJson: true };
    // A success body may be secret material (a read cut short by a proxy): it is described, never quoted.
    const looksLike = text.trimStart().startsWith('<') ? ' (it looks like HTML: a proxy or web server page?)' : '';
    throw new SecretsError(
      {
        ...description,
        status,
        errors: [`the answer (${Buffer.byteLength(text)} bytes) is not JSON${looksLike}: ${describeJsonSyntaxProblem(text)}`],
        warnings: [],
      },
      {
        code: 'SECRETS_PROTOCOL',
        hint: 'Check that SECRETS_ADDR points at the secrets service itself, not at a proxy login page or a web server.',
      },
    );
  }
}

function hasErrorStrings(body: unknown): boolean {
  return !!body && typeof body === 'object' && Array.isArray((body as { errors?: unknown }).errors) && (body as { errors: unknown[] }).errors.length > 0;
}

/**
 * The mount path relative to the request's namespace. A service may answer with the namespace included
 * (`ns1/secret/` for a request for `secret/foo` in namespace `ns1/`): drop leading segments until it is a prefix.
 */
function relativeMount(requested: string, returned: string): string {
  const target = requested.endsWith('/') ? requested : `${requested}/`;
  let candidate = returned;
  while (candidate !== '' && !target.startsWith(candidate)) {
    const slash = candidate.indexOf('/');
    candidate = slash === -1 ? '' : candidate.slice(slash + 1);
  }
  return candidate === '' ? `${requested.split('/')[0]}/` : candidate;
}

function parseHelp(body: unknown, path: string): HelpResult {
  const record = body as { help?: unknown; openapi?: unknown } | undefined;
  if (!record || typeof record.help !== 'string' || !record.openapi || typeof record.openapi !== 'object') {
    throw new SecretsError(
      { method: 'GET', path: `${path}?help=1`, status: 200, errors: ['the help response is not {help, openapi}'], warnings: [] },
      { code: 'SECRETS_PROTOCOL' },
    );
  }
  const openapi = record.openapi as HelpResult['openapi'];
  if (typeof openapi.openapi !== 'string' || !openapi.paths || typeof openapi.paths !== 'object') {
    throw new SecretsError(
      { method: 'GET', path: `${path}?help=1`, status: 200, errors: ['the help openapi object has no openapi version or paths'], warnings: [] },
      { code: 'SECRETS_PROTOCOL' },
    );
  }
  return { help: record.help, openapi };
}

function tokenInfoFromLookup(data: Record<string, unknown>): TokenInfo {
  const strings = (v: unknown) => (Array.isArray(v) ? v.map(String) : []);
  return {
    accessor: typeof data.accessor === 'string' ? data.accessor : undefined,
    policies: strings(data.policies),
    ttl: typeof data.ttl === 'number' ? data.ttl : 0,
    renewable: data.renewable === true,
    entityId: typeof data.entity_id === 'string' && data.entity_id !== '' ? data.entity_id : undefined,
    metadata: data.meta && typeof data.meta === 'object' ? (data.meta as Record<string, string>) : {},
    displayName: typeof data.display_name === 'string' ? data.display_name : undefined,
  };
}
