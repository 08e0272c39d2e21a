/**
 * One context server's authorization, as the authorized fetch needs it: the access token to send, what to do on a 401
 * (refresh, else a fresh authorization) and on a 403 `insufficient_scope` (one fresh authorization with the merged
 * scopes), the authorization code flow itself (PKCE S256, `state`, RFC 9207 `iss`, a loopback redirect) and the
 * token requests — `resource` in every one (CTX-AUTH-RESOURCE-ALWAYS). One flow runs at a time (concurrent requests
 * wait for it). Tokens live in the token store `gantry auth` uses; none reaches a log line or an error.
 */
import { terminalText } from '../../terminal-text.js';
import { ExitCode, UsageError, bothFaces } from '../../errors.js';
import { getLogger, type Logger } from '../../log.js';
import { registerSecret, redactUrl } from '../../redact.js';
import type { HttpClient } from '../../http/index.js';
import { KvTokenStore, normaliseAuthUrl, openTokenStore, type KvLike, type StoreNames, type TokenStore } from '../../auth/store/index.js';
import type { TokenSet } from '../../auth/store/types.js';
import { tokenSetOf } from '../../auth/tokens.js';
import { canonicalServerUri, checkEndpoint, isLoopbackHost } from './canonical.js';
import {
  authMethodOf,
  authorizationCodeGrantRequest,
  clientAuthFor,
  clientCredentialsGrantRequest,
  clientKeyOf,
  createPkce,
  jwtBearerGrantRequest,
  processTokenExchangeResponse,
  processTokenResponse,
  randomState,
  refreshTokenGrantRequest,
  tokenExchangeRequest,
  tokenTypes,
  type ClientKey,
  type OAuthAnswer,
  type OAuthConfig,
} from '../../oauth/index.js';
import {
  discoverAuthorizationServer,
  discoverProtectedResource,
  requireS256,
  type DiscoveredAuthorizationServer,
  type DiscoveredResource,
} from './discovery.js';
import { ContextClientError, fromOAuth, peerFailed } from './errors.js';
import { refusedPage, startCallbackServer, type CallbackServer } from './loopback.js';
import { registerClient } from './registration.js';
import { ClientState, profileFor, type LoginEntry } from './state.js';
import { bearerChallenge } from './www-authenticate.js';

export interface AuthorizationOptions {
  /** A client registered beforehand with the authorization server (CTX-DCR-FALLBACK). */
  clientId?: string;
  /** Its secret, for a confidential client; default GANTRY_MCP_CLIENT_SECRET (where the command reads it too). */
  clientSecret?: string;
  /** Where GANTRY_MCP_CLIENT_SECRET, GANTRY_CONFIG_DIR and the SECRETS_* settings are read (default process.env). */
  env?: NodeJS.ProcessEnv;
  /**
   * The client's private key (the text of a PEM file, or a JWK as JSON), to authenticate with private_key_jwt
   * (RFC 7523 §2.2) instead of a secret; the JWS algorithm is `privateKeyAlg`, else the JWK's, else the key's own.
   */
  privateKey?: string;
  privateKeyAlg?: string;
  /**
   * Sign in without a person (no browser, no callback): the client-credentials grant (RFC 6749 §4.4) as `clientId`,
   * authenticated with `clientSecret` or `privateKey`. The tokens belong to the client itself.
   */
  clientCredentials?: boolean;
  /**
   * Cross-app access (Enterprise-Managed Authorization, SEP-990), also without a person: the person's ID token from
   * the enterprise identity provider is exchanged there for an ID-JAG (RFC 8693), which `clientId` presents to the
   * server's authorization server as a JWT-bearer grant (RFC 7523 §2.1).
   */
  crossAppAccess?: CrossAppAccess;
  /** A client ID metadata document URL, used as the client id where the server advertises support for it. */
  clientMetadataUrl?: string;
  /** Scopes to ask for beyond the server's challenge (or its metadata's scopes_supported). */
  scopes?: string[];
  /** Shows the person the authorization URL: opens a browser, or prints it. Default: a warning line on stderr. */
  openUrl?: (url: string) => void | Promise<void>;
  /** The loopback callback's port (default: the registered client's, else any free port). */
  callbackPort?: number;
  /** How long the person has to finish in the browser (default 5 min). */
  authorizationTimeoutMs?: number;
  /** Where tokens live: a store handed in, else `store` (`keyring`, `kv:<mount>/<path>`, `file`) or the automatic choice. */
  tokenStore?: TokenStore;
  store?: string;
  /** Allow a plain-text token file when neither the keyring nor a kv engine can be used. */
  insecureStorage?: boolean;
  /** Gantry's configuration folder (default GANTRY_CONFIG_DIR, XDG_CONFIG_HOME/gantry, ~/.config/gantry). */
  configDir?: string;
  /** The kv engine logins may be kept in; default the one SECRETS_ADDR and SECRETS_TOKEN configure, as for the command. */
  kv?: () => Promise<KvLike | undefined>;
  /** How messages name the choice of store: the options (default) or the command's flags. */
  storeNames?: StoreNames;
  logger?: Logger;
}

export interface CrossAppAccess {
  /** The ID token the identity provider issued to the person (an OpenID Connect ID token). */
  idToken: string;
  /** The identity provider's token endpoint, where the token exchange goes. */
  idpTokenEndpoint: string;
  /** The identity provider's issuer (said in messages). */
  idpIssuer?: string;
  /** The client Gantry is at the identity provider, and its secret if it is confidential. */
  idpClientId?: string;
  idpClientSecret?: string;
}

/** What the authorized fetch asks of the session. */
export interface Authorizer {
  readonly resource: string;
  /** The access token to send, refreshed first when it is about to expire; undefined before any sign-in. */
  accessToken(signal?: AbortSignal): Promise<string | undefined>;
  /** After a 401: a refreshed token or a fresh authorization. `sent` is the token that was refused. */
  unauthorized(wwwAuthenticate: string | string[] | undefined, sent: string | undefined, signal?: AbortSignal): Promise<void>;
  /** After a 403 insufficient_scope: one fresh authorization with the granted and the challenged scopes. */
  insufficientScope(wwwAuthenticate: string | string[] | undefined, signal?: AbortSignal): Promise<void>;
  /** The scopes granted to the current token. */
  grantedScopes(): string[];
}

interface Login {
  /** The authorization server the resource metadata named (for a 2025-03-26 server, its origin). */
  issuer: string;
  clientId: string;
  /** The resource the tokens were asked for (`DiscoveredResource.resource`). */
  resource: string;
  revision?: '2025-03-26' | undefined;
  tokens: TokenSet;
}

interface Client {
  clientId: string;
  clientSecret?: string | undefined;
  privateKey?: ClientKey | undefined;
  authMethod: string;
  source: 'pre-registered' | 'metadata-document' | 'dynamic';
}

const refreshMarginMs = 30_000;
const defaultTimeoutMs = 5 * 60_000;
const splitScopes = (text: string | undefined) => (text ?? '').split(/\s+/).filter(Boolean);
const union = (...lists: string[][]) => [...new Set(lists.flat())];

export class AuthSession implements Authorizer {
  readonly resource: string;
  readonly #http: HttpClient;
  readonly #options: AuthorizationOptions;
  readonly #logger: Logger;
  readonly #state: ClientState;
  #login: Login | undefined;
  #loaded = false;
  #resourceInfo: DiscoveredResource | undefined;
  #servers = new Map<string, DiscoveredAuthorizationServer>();
  #store: { store: TokenStore; spec: string; unsaid?: string[] } | undefined;
  #flow: Promise<void> | undefined;
  readonly #privateKey: ClientKey | undefined;
  /** Counts the authorization code flows run (tests and the CLI's messages read it). */
  authorizations = 0;
  refreshes = 0;

  constructor(serverUrl: string, http: HttpClient, options: AuthorizationOptions = {}) {
    this.resource = canonicalServerUri(serverUrl);
    const { protocol, hostname } = new URL(this.resource);
    // A bearer token crosses the network only inside TLS (RFC 6750 §5.3); plain http stays on a loopback host.
    if (protocol === 'http:' && !isLoopbackHost(hostname)) {
      throw new UsageError(`refusing to send access tokens to ${this.resource} over plain http`, {
        code: 'CTX_SERVER_URL',
        hint: "use the server's https:// address (plain http is accepted on a loopback address only)",
      });
    }
    this.#http = http;
    // The secret as the command reads it: the option, else GANTRY_MCP_CLIENT_SECRET — which belongs to a client id.
    const env = options.env ?? process.env;
    const fromEnv = options.clientSecret === undefined ? env.GANTRY_MCP_CLIENT_SECRET?.trim() || undefined : undefined;
    if (fromEnv !== undefined && options.clientId === undefined) {
      throw new UsageError('GANTRY_MCP_CLIENT_SECRET is set but no client id is given', {
        ...bothFaces(
          (name) => `give ${name} with the id of the client that secret belongs to, or unset GANTRY_MCP_CLIENT_SECRET`,
          'the clientId option',
          '--client-id',
        ),
        code: 'CTX_CLIENT',
      });
    }
    options = fromEnv !== undefined ? { ...options, clientSecret: fromEnv } : options;
    this.#options = options;
    this.#logger = options.logger ?? getLogger();
    this.#state = new ClientState(options.configDir, env);
    if (options.clientSecret !== undefined) registerSecret(options.clientSecret);
    if (options.clientSecret !== undefined && options.clientId === undefined)
      throw new UsageError('a client secret needs its client id', { code: 'CTX_CLIENT' });
    this.#privateKey = this.#checkWithoutPerson(options);
    if (options.callbackPort !== undefined && (!Number.isInteger(options.callbackPort) || options.callbackPort < 0 || options.callbackPort > 65_535)) {
      throw new UsageError(`the callback port ${String(options.callbackPort)} is no port number (0–65535)`, { code: 'CTX_CALLBACK_PORT' });
    }
  }

  /** The options of a sign-in without a person, checked before anything is sent; the private key, loaded. */
  #checkWithoutPerson(options: AuthorizationOptions): ClientKey | undefined {
    const { clientId, clientSecret, privateKey, clientCredentials, crossAppAccess } = options;
    const client = (what: string) => new UsageError(what, { code: 'CTX_CLIENT' });
    if (privateKey !== undefined && clientSecret !== undefined) throw client('give the client a secret or a private key, not both (it authenticates with one)');
    if (privateKey !== undefined && clientId === undefined) throw client('a private key needs its client id');
    if (clientCredentials === true && (clientId === undefined || (clientSecret === undefined && privateKey === undefined)))
      throw new UsageError('the client-credentials grant needs a client id with its secret or its private key', {
        code: 'CTX_CLIENT',
        hint: 'give clientId with clientSecret or privateKey (the client registered at the authorization server)',
        cliHint: 'give --client-id with --client-secret-file (or GANTRY_MCP_CLIENT_SECRET) or --private-key-file',
      });
    if (clientCredentials === true && crossAppAccess !== undefined) throw client('choose one sign-in: client credentials or cross-app access');
    if (crossAppAccess !== undefined) {
      if (clientId === undefined) throw client('cross-app access needs the client id registered at the authorization server');
      if (typeof crossAppAccess.idToken !== 'string' || crossAppAccess.idToken === '') throw client("cross-app access needs the person's ID token");
      registerSecret(crossAppAccess.idToken);
      registerSecret(crossAppAccess.idpClientSecret);
      checkEndpoint(crossAppAccess.idpTokenEndpoint, "the identity provider's token endpoint", crossAppAccess.idpIssuer ?? 'the identity provider');
    }
    return privateKey !== undefined ? clientKeyOf(privateKey, options.privateKeyAlg) : undefined;
  }

  /** Signs in without a person: client credentials, or cross-app access. */
  get #withoutPerson(): boolean {
    return this.#options.clientCredentials === true || this.#options.crossAppAccess !== undefined;
  }

  grantedScopes(): string[] {
    return splitScopes(this.#login?.tokens.scope);
  }

  /** The token store; its warnings (a plain-text file, the keyring unreachable) are said when a sign-in will write to it. */
  async #openStore(spec?: string, announce = false): Promise<{ store: TokenStore; spec: string }> {
    if (this.#options.tokenStore) return { store: this.#options.tokenStore, spec: 'custom' };
    if (this.#store && (spec === undefined || spec === this.#store.spec)) {
      // Opened earlier without a sign-in in view (to look for a shared one): its warnings are said now, once.
      if (announce && this.#store.unsaid) for (const line of this.#store.unsaid.splice(0)) this.#logger.warn(line);
      return this.#store;
    }
    const wanted = spec === 'custom' ? this.#options.store : (spec ?? this.#options.store);
    const opened = await openTokenStore(wanted, {
      // The profile names the kv path where the kv engine keeps logins (secret/gantry/auth/<profile>): one per server,
      // so that signing in to a second server does not collide with the first's login.
      profile: profileFor(this.resource),
      insecureStorage: this.#options.insecureStorage === true,
      ...(this.#options.configDir !== undefined ? { configDir: this.#options.configDir } : {}),
      ...(this.#options.env ? { env: this.#options.env } : {}),
      ...(this.#options.kv ? { kv: this.#options.kv } : {}),
      ...(this.#options.storeNames ? { names: this.#options.storeNames } : {}),
    });
    const warnings = [opened.fallbackReason, opened.warning].filter((line): line is string => !!line);
    if (announce) for (const line of warnings) this.#logger.warn(line);
    this.#store = { store: opened.store, spec: opened.store.spec, ...(announce ? {} : { unsaid: warnings }) };
    return this.#store;
  }

  #key(issuer: string, clientId: string) {
    return { authUrl: normaliseAuthUrl(issuer), clientId, profile: profileFor(this.resource) };
  }

  /** The login this server used last time, when its client is the one asked for now. */
  async #load(): Promise<void> {
    if (this.#loaded) return;
    this.#loaded = true;
    const entry = await this.#state.login(this.resource);
    if (!entry) {
      await this.#adoptShared();
      return;
    }
    if (this.#options.clientId !== undefined && entry.clientId !== this.#options.clientId) return;
    const { store } = await this.#openStore(entry.store);
    const stored = await store.read(this.#key(entry.issuer, entry.clientId)).catch((error: unknown) => {
      this.#logger.warn(`the stored login for ${this.resource} could not be read (${(error as Error).message}); signing in again`);
      return undefined;
    });
    if (stored)
      this.#login = {
        issuer: entry.issuer,
        clientId: entry.clientId,
        resource: entry.resource ?? this.resource,
        revision: entry.revision,
        tokens: stored.tokens,
      };
  }

  /**
   * No sign-in recorded in this config folder, but one in the kv engine at this server's path — made by the command
   * or a script with another config folder (a CI job, a second machine): used as it is, since this server's path holds
   * only its logins, and a public client's refresh needs only its id. Otherwise a sign-in here would be approved and
   * then refused by the store, which will not mix two clients' logins at one path.
   */
  async #adoptShared(): Promise<void> {
    const env = this.#options.env ?? process.env;
    const kvAsked = this.#options.kv !== undefined || (this.#options.store ?? '').startsWith('kv') || (this.#options.store === undefined && !!env.SECRETS_ADDR);
    if (!kvAsked || this.#options.tokenStore) return;
    const opened = await this.#openStore().catch(() => undefined);
    if (!(opened?.store instanceof KvTokenStore)) return;
    const found = await opened.store.peek().catch(() => undefined);
    if (!found || found.profile !== profileFor(this.resource)) return;
    if (this.#options.clientId !== undefined && found.clientId !== this.#options.clientId) return;
    this.#logger.info(`using the sign-in kept in ${opened.store.describe(found)} (client ${found.clientId})`);
    this.#login = { issuer: found.authUrl, clientId: found.clientId, resource: this.resource, tokens: found.tokens };
  }

  async accessToken(signal?: AbortSignal): Promise<string | undefined> {
    await this.#flow?.catch(() => undefined);
    await this.#load();
    const login = this.#login;
    if (!login) return undefined;
    // Without a person a new grant costs nothing: an expiring token is replaced before it is refused.
    if (login.tokens.expiresAt - refreshMarginMs <= Date.now() && (login.tokens.refreshToken || this.#withoutPerson)) {
      await this.#single(() => this.#refreshOrAuthorize(undefined, signal));
    }
    return this.#login?.tokens.accessToken;
  }

  /** One flow at a time: a request that needs one while another runs waits for it. */
  async #single(run: () => Promise<void>): Promise<void> {
    if (this.#flow) {
      await this.#flow;
      return;
    }
    this.#flow = run().finally(() => {
      this.#flow = undefined;
    });
    await this.#flow;
  }

  async unauthorized(wwwAuthenticate: string | string[] | undefined, sent: string | undefined, signal?: AbortSignal): Promise<void> {
    // Another request already replaced the refused token: use the new one.
    if (sent !== undefined && this.#login && this.#login.tokens.accessToken !== sent) return;
    const challenge = bearerChallenge(wwwAuthenticate);
    await this.#single(async () => {
      const resourceInfo = await this.#discoverResource(challenge?.resource_metadata, signal);
      const issuer = resourceInfo.metadata.authorization_servers[0]!;
      if (this.#login && this.#login.issuer !== issuer) {
        this.#logger.debug(`mcp: the stored login is from ${this.#login.issuer}; ${this.resource} now names ${issuer}`);
        this.#login = undefined;
      }
      const scopes = this.#scopesFor(challenge?.scope, resourceInfo);
      if (sent !== undefined && this.#login?.tokens.refreshToken) await this.#refreshOrAuthorize(scopes, signal);
      else await this.#signIn(resourceInfo, scopes, signal);
    });
  }

  async insufficientScope(wwwAuthenticate: string | string[] | undefined, signal?: AbortSignal): Promise<void> {
    const challenge = bearerChallenge(wwwAuthenticate);
    await this.#single(async () => {
      const resourceInfo = await this.#discoverResource(challenge?.resource_metadata, signal);
      const scopes = union(this.grantedScopes(), splitScopes(challenge?.scope), this.#options.scopes ?? []);
      // warn, not info: the person is about to be sent to the sign-in page again and should know why.
      this.#logger.warn(`${this.resource} needs more scopes (${challenge?.scope ?? 'not named'}); signing in again for: ${scopes.join(' ')}`);
      await this.#signIn(resourceInfo, scopes, signal);
    });
  }

  /** The scopes of a first authorization: the challenge's, else the metadata's scopes_supported, plus the caller's. */
  #scopesFor(challenged: string | undefined, resourceInfo: DiscoveredResource): string[] {
    const base = challenged !== undefined ? splitScopes(challenged) : (resourceInfo.metadata.scopes_supported ?? []);
    return union(base, this.#options.scopes ?? []);
  }

  async #discoverResource(metadataUrl: string | undefined, signal?: AbortSignal): Promise<DiscoveredResource> {
    if (this.#resourceInfo && (metadataUrl === undefined || metadataUrl === this.#resourceInfo.metadataUrl)) return this.#resourceInfo;
    this.#resourceInfo = await discoverProtectedResource(this.resource, { http: this.#http, resourceMetadataUrl: metadataUrl, ...(signal ? { signal } : {}) });
    this.#logger.debug(
      this.#resourceInfo.metadataUrl
        ? `mcp: resource metadata from ${this.#resourceInfo.metadataUrl} for ${this.#resourceInfo.resource}; authorization servers ${this.#resourceInfo.metadata.authorization_servers.join(', ')}`
        : `mcp: no resource metadata for ${this.resource}: a server of the 2025-03-26 revision, its authorization server at ${this.#resourceInfo.metadata.authorization_servers[0]}`,
    );
    return this.#resourceInfo;
  }

  async #server(issuer: string, revision: DiscoveredResource['revision'], signal?: AbortSignal): Promise<DiscoveredAuthorizationServer> {
    let server = this.#servers.get(issuer);
    if (!server) {
      server = await discoverAuthorizationServer(issuer, { http: this.#http, ...(revision ? { revision } : {}), ...(signal ? { signal } : {}) });
      this.#servers.set(issuer, server);
      this.#logger.debug(`mcp: authorization server metadata from ${server.metadataUrl}`);
    }
    return server;
  }

  /** A refresh with the stored refresh token; a refused one (invalid_grant …) falls back to a fresh authorization. */
  async #refreshOrAuthorize(scopes: string[] | undefined, signal?: AbortSignal): Promise<void> {
    const login = this.#login;
    if (!login?.tokens.refreshToken) {
      const resourceInfo = await this.#discoverResource(undefined, signal);
      await this.#signIn(resourceInfo, scopes ?? this.#scopesFor(undefined, resourceInfo), signal);
      return;
    }
    const server = await this.#server(login.issuer, login.revision, signal);
    const client = await this.#clientForRefresh(login, server);
    try {
      const refreshToken = login.tokens.refreshToken;
      const tokens = await this.#tokenRequest(
        server,
        client,
        (config) => refreshTokenGrantRequest(config, refreshToken, { resource: login.resource }, signal),
        login.tokens,
      );
      this.refreshes += 1;
      await this.#keep({ ...login, clientId: client.clientId }, tokens);
    } catch (error) {
      if (!(error instanceof ContextClientError) || error.code !== 'CTX_TOKEN_ERROR' || error.exitCode !== ExitCode.checkFailed) throw error;
      this.#logger.info(`the refresh token for ${this.resource} was refused (${error.oauthError ?? error.status}); signing in again`);
      this.#login = undefined;
      const resourceInfo = await this.#discoverResource(undefined, signal);
      await this.#signIn(resourceInfo, scopes ?? union(splitScopes(login.tokens.scope), this.#options.scopes ?? []), signal);
    }
  }

  async #clientForRefresh(login: Login, server: DiscoveredAuthorizationServer): Promise<Client> {
    if (this.#options.clientId === login.clientId) {
      return {
        clientId: login.clientId,
        clientSecret: this.#options.clientSecret,
        privateKey: this.#privateKey,
        authMethod: this.#privateKey ? 'private_key_jwt' : this.#options.clientSecret ? 'client_secret_basic' : 'none',
        source: 'pre-registered',
      };
    }
    const registered = await this.#state.registeredClient(server.issuer);
    return { clientId: login.clientId, authMethod: registered?.clientId === login.clientId ? registered.tokenEndpointAuthMethod : 'none', source: 'dynamic' };
  }

  /** A fresh sign-in: the authorization code flow with a person, else the grant the options name. */
  async #signIn(resourceInfo: DiscoveredResource, scopes: string[], signal?: AbortSignal): Promise<void> {
    if (this.#withoutPerson) await this.#grantWithoutPerson(resourceInfo, scopes, signal);
    else await this.#authorize(resourceInfo, scopes, signal);
  }

  /**
   * The client-credentials grant, or cross-app access (the ID token exchanged at the identity provider for an ID-JAG
   * for this authorization server and resource, then presented as a JWT-bearer grant) — `resource` in each request.
   */
  async #grantWithoutPerson(resourceInfo: DiscoveredResource, scopes: string[], signal?: AbortSignal): Promise<void> {
    const issuer = resourceInfo.metadata.authorization_servers[0]!;
    const { resource, revision } = resourceInfo;
    const server = await this.#server(issuer, revision, signal);
    await this.#openStore(undefined, true);
    const client = this.#preRegistered(server);
    const scope = scopes.length > 0 ? scopes.join(' ') : undefined;
    const cross = this.#options.crossAppAccess;
    this.authorizations += 1;
    this.#logger.debug(
      `mcp: ${cross ? 'cross-app access' : 'client-credentials grant'} at ${redactUrl(server.metadata.token_endpoint)} as client ${client.clientId} (${client.authMethod}), scopes ${scope ?? '(none)'}`,
    );
    const grant = cross ? await this.#identityAssertion(cross, server.issuer, resource, scope, signal) : undefined;
    const tokens = await this.#tokenRequest(
      server,
      client,
      (config) =>
        grant !== undefined
          ? jwtBearerGrantRequest(config, grant, { resource, scope }, signal)
          : clientCredentialsGrantRequest(config, { resource, scope }, signal),
      { scope: scope ?? '' },
    );
    await this.#keep({ issuer, clientId: client.clientId, resource, revision }, tokens);
  }

  /** RFC 8693 at the identity provider: the person's ID token for an ID-JAG naming this authorization server and resource. */
  async #identityAssertion(cross: CrossAppAccess, audience: string, resource: string, scope: string | undefined, signal?: AbortSignal): Promise<string> {
    const { idpClientId, idpClientSecret } = cross;
    const config: OAuthConfig = {
      http: this.#http,
      server: { issuer: cross.idpIssuer, token_endpoint: cross.idpTokenEndpoint },
      client: idpClientId !== undefined ? { clientId: idpClientId, clientSecret: idpClientSecret, authMethod: clientAuthFor(idpClientSecret) } : undefined,
      serverFailure: peerFailed,
    };
    try {
      const answer = await tokenExchangeRequest(
        config,
        { subjectToken: cross.idToken, subjectTokenType: tokenTypes.idToken, requestedTokenType: tokenTypes.idJag },
        { audience, resource, scope },
        signal,
      );
      return processTokenExchangeResponse(answer, tokenTypes.idJag, `the identity provider ${cross.idpIssuer ?? redactUrl(cross.idpTokenEndpoint)}`).token;
    } catch (error) {
      throw fromOAuth(error);
    }
  }

  /**
   * The authorization code flow (CTX-EP-AUTHORIZATION-REQUEST, CTX-EP-TOKEN-REQUEST) with the first authorization
   * server the resource metadata names, for the resource it covers.
   */
  async #authorize(resourceInfo: DiscoveredResource, scopes: string[], signal?: AbortSignal): Promise<void> {
    const issuer = resourceInfo.metadata.authorization_servers[0]!;
    const { resource, revision } = resourceInfo;
    const server = await this.#server(issuer, revision, signal);
    requireS256(server);
    // Where the tokens will go is settled (and said) before the person is asked to approve anything.
    await this.#openStore(undefined, true);
    const { client, callback } = await this.#client(server, signal);
    try {
      const pkce = createPkce();
      const state = randomState();
      const url = new URL(server.metadata.authorization_endpoint);
      const params: Record<string, string> = {
        response_type: 'code',
        client_id: client.clientId,
        redirect_uri: callback.redirectUri,
        state,
        code_challenge: pkce.challenge,
        code_challenge_method: 'S256',
        resource,
      };
      if (scopes.length > 0) params.scope = scopes.join(' ');
      for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
      this.authorizations += 1;
      this.#logger.debug(
        `mcp: authorization request to ${redactUrl(server.metadata.authorization_endpoint)} as ${client.source} client ${client.clientId}, redirect ${callback.redirectUri}, scopes ${scopes.join(' ') || '(none)'}`,
      );
      const timeoutMs = this.#options.authorizationTimeoutMs ?? defaultTimeoutMs;
      const waiting = callback.wait({
        timeoutMs,
        signal,
        check: (query) => {
          const problem = this.#callbackProblem(query, state, server);
          return problem ? { ok: false, page: refusedPage(problem.page) } : { ok: true };
        },
      });
      waiting.catch(() => undefined);
      const open =
        this.#options.openUrl ?? ((address: string) => this.#logger.warn(`open this address in a browser to sign in to ${this.resource}: ${address}`));
      await open(url.toString());
      const query = await waiting;
      const problem = this.#callbackProblem(query, state, server);
      if (problem) throw problem.error;
      const code = query.get('code')!;
      registerSecret(code);
      const tokens = await this.#tokenRequest(
        server,
        client,
        (config) => authorizationCodeGrantRequest(config, { code, redirectUri: callback.redirectUri, codeVerifier: pkce.verifier }, { resource }, signal),
        { scope: scopes.join(' ') },
      );
      await this.#keep({ issuer, clientId: client.clientId, resource, revision }, tokens);
    } finally {
      await callback.close();
    }
  }

  /** What is wrong with a callback, in the order that matters: a forged `state` first, then `iss`, then an error. */
  #callbackProblem(query: URLSearchParams, state: string, server: DiscoveredAuthorizationServer): { error: ContextClientError; page: string } | undefined {
    if (query.get('state') !== state) {
      return {
        page: "The answer did not carry this sign-in's state.",
        error: new ContextClientError("the authorization callback's state is not the one sent; refusing it (a forged or stale redirect)", {
          code: 'CTX_STATE_MISMATCH',
          hint: 'run the command again; if it happens again, something else is answering on the loopback redirect',
        }),
      };
    }
    const iss = query.get('iss');
    if (iss !== null && iss !== server.issuer) {
      return {
        page: 'The answer came from another authorization server than the one asked.',
        error: new ContextClientError(`the authorization callback's iss is ${iss.slice(0, 200)}, not ${server.issuer}; refusing it (RFC 9207: a mix-up)`, {
          code: 'CTX_ISS_MISMATCH',
        }),
      };
    }
    if (iss === null && server.metadata.authorization_response_iss_parameter_supported === true) {
      return {
        page: 'The answer did not say which authorization server sent it.',
        error: new ContextClientError(`the authorization callback has no iss, and ${server.issuer} says it always sends one (RFC 9207); refusing it`, {
          code: 'CTX_ISS_MISMATCH',
        }),
      };
    }
    const error = query.get('error');
    if (error !== null) {
      const description = query.get('error_description');
      const said = description ? ` (${terminalText(description.slice(0, 200))})` : '';
      if (error === 'access_denied') {
        return {
          page: 'Access was denied.',
          error: new ContextClientError(`access was denied on the authorization page${said}`, {
            code: 'CTX_ACCESS_DENIED',
            oauthError: error,
            hint: 'run the command again and allow access',
          }),
        };
      }
      return {
        page: 'The authorization server refused the request.',
        error: new ContextClientError(`the authorization server refused the authorization request: ${error.slice(0, 100)}${said}`, {
          code: 'CTX_AUTHORIZATION_ERROR',
          oauthError: error,
        }),
      };
    }
    if (!query.get('code')) {
      return {
        page: 'The answer carried no authorization code.',
        error: new ContextClientError('the authorization callback carries neither a code nor an error', { code: 'CTX_AUTHORIZATION_ERROR' }),
      };
    }
    return undefined;
  }

  /**
   * The client to authorize as (CTX-DCR-FALLBACK): the pre-registered id, else the client ID metadata document URL
   * where the server supports it, else the client registered dynamically earlier (its loopback port again; a new
   * registration when that port is taken), else a new dynamic registration. With the callback server bound.
   */
  async #client(server: DiscoveredAuthorizationServer, signal?: AbortSignal): Promise<{ client: Client; callback: CallbackServer }> {
    const { clientId, clientMetadataUrl, callbackPort } = this.#options;
    if (clientId !== undefined) return { client: this.#preRegistered(server), callback: await startCallbackServer(callbackPort ?? 0) };
    if (clientMetadataUrl !== undefined && server.metadata.client_id_metadata_document_supported === true) {
      return {
        client: { clientId: clientMetadataUrl, authMethod: 'none', source: 'metadata-document' },
        callback: await startCallbackServer(callbackPort ?? 0),
      };
    }
    const registered = await this.#state.registeredClient(server.issuer);
    if (registered && (callbackPort === undefined || new URL(registered.redirectUri).port === String(callbackPort))) {
      try {
        const callback = await startCallbackServer(Number(new URL(registered.redirectUri).port));
        return { client: { clientId: registered.clientId, authMethod: registered.tokenEndpointAuthMethod, source: 'dynamic' }, callback };
      } catch (error) {
        if ((error as { code?: unknown }).code !== 'CTX_CALLBACK_PORT') throw error;
        this.#logger.info(`the port of the client registered at ${server.issuer} (${registered.redirectUri}) is taken; registering again`);
      }
    }
    if (!server.metadata.registration_endpoint) {
      throw new UsageError(
        `no client for ${server.issuer}: it offers no dynamic registration${clientMetadataUrl ? ' nor client ID metadata documents' : ''}, and no client id was given`,
        {
          code: 'CTX_NO_CLIENT',
          ...bothFaces(
            (give) => `register a client with the authorization server (redirect URI http://127.0.0.1:<port>/callback) and ${give}`,
            'give its id (and its secret, if any) in the clientId and clientSecret options',
            'pass its id with --client-id (its secret, if any, in GANTRY_MCP_CLIENT_SECRET)',
          ),
        },
      );
    }
    const callback = await startCallbackServer(callbackPort ?? 0);
    try {
      const client = await this.#register(server, callback.redirectUri, signal);
      return { client, callback };
    } catch (error) {
      await callback.close();
      throw error;
    }
  }

  /** The client given in the options, authenticated with its key, else its secret as the server prefers. */
  #preRegistered(server: DiscoveredAuthorizationServer): Client {
    const { clientId, clientSecret } = this.#options;
    const authMethod = this.#privateKey ? 'private_key_jwt' : clientAuthFor(clientSecret, server.metadata.token_endpoint_auth_methods_supported);
    return { clientId: clientId!, clientSecret, privateKey: this.#privateKey, authMethod, source: 'pre-registered' };
  }

  /** RFC 7591 dynamic registration (registration.ts); a public client's registration is kept for this issuer. */
  async #register(server: DiscoveredAuthorizationServer, redirectUri: string, signal?: AbortSignal): Promise<Client> {
    const registered = await registerClient(this.#http, server, redirectUri, signal ? { signal } : {});
    this.#logger.info(`registered Gantry as client ${registered.clientId} at ${server.issuer}`);
    // A secret is never written to disk in plain text: such a registration lasts this run only.
    if (registered.clientSecret === undefined) {
      await this.#state.saveRegisteredClient(server.issuer, {
        clientId: registered.clientId,
        redirectUri,
        tokenEndpointAuthMethod: 'none',
        registeredAt: new Date().toISOString(),
      });
      return { clientId: registered.clientId, authMethod: 'none', source: 'dynamic' };
    }
    return { clientId: registered.clientId, clientSecret: registered.clientSecret, authMethod: registered.tokenEndpointAuthMethod, source: 'dynamic' };
  }

  /**
   * A token request through the OAuth core (the client authenticated as registered, `resource` in it), its answer
   * checked; what it leaves out comes from `previous` (a refresh keeps its refresh token and scope), a refusal is
   * CTX_TOKEN_ERROR (3 when the server failed).
   */
  async #tokenRequest(
    server: DiscoveredAuthorizationServer,
    client: Client,
    request: (config: OAuthConfig) => Promise<OAuthAnswer>,
    previous: Partial<TokenSet>,
  ): Promise<TokenSet> {
    const config: OAuthConfig = {
      http: this.#http,
      server: server.metadata,
      client: {
        clientId: client.clientId,
        clientSecret: client.clientSecret,
        privateKey: client.privateKey,
        audience: server.issuer,
        authMethod: authMethodOf(client.authMethod),
      },
      serverFailure: peerFailed,
    };
    try {
      return tokenSetOf(processTokenResponse(await request(config), `the token endpoint of ${server.issuer}`), Date.now(), previous);
    } catch (error) {
      throw fromOAuth(error);
    }
  }

  /** Keeps new tokens: in memory, in the token store (a rotated refresh token replaces the old one), in the index. */
  async #keep(login: Omit<Login, 'tokens'>, tokens: TokenSet): Promise<void> {
    const { issuer, clientId, resource, revision } = login;
    this.#login = { issuer, clientId, resource, revision, tokens };
    const { store, spec } = await this.#openStore();
    await store.write({ ...this.#key(issuer, clientId), tokens });
    const entry: LoginEntry = {
      issuer,
      clientId,
      profile: profileFor(this.resource),
      store: spec,
      scope: tokens.scope,
      writtenAt: new Date().toISOString(),
      // Only where they differ from the default: the server called, and today's discovery.
      ...(resource !== this.resource ? { resource } : {}),
      ...(revision ? { revision } : {}),
    };
    await this.#state.saveLogin(this.resource, entry);
  }
}
