/**
 * An app on the platform (a GitHub App, renamed): its id and private key sign short JWTs (RS256) that authenticate
 * the app as itself on `/app…`; `POST /app/installations/{id}/access_tokens` turns one into an installation token,
 * kept until a minute before it expires. `clientFor(installationId)` is a `PlatformClient` acting as that
 * installation — its budget, its token renewed as needed — as a webhook handler wants for a delivery's
 * `installation.id`. The private key and every token go to the redactor; none is ever in a message.
 */
import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { expectObject, expectOptions, expectString } from '../arguments.js';
import { UsageError } from '../errors.js';
import { ProtocolError, registerSecret } from '../http/index.js';
import { readLocalTextSync } from '../local-paths.js';
import { getLogger, type Logger } from '../log.js';
import { PlatformClient, type PlatformClientOptions, type PlatformTokenSource } from './client.js';
import { systemClock } from './clock.js';
import { credentialKey, type IdentityOptions } from './identity.js';
import { platformSettings, sharedPlatformOptionKeys } from './settings.js';
import { optionKeys, refuseUnknownOptions, settingsReader } from '../settings.js';

/** GitHub: a JWT lives at most 10 minutes; `iat` 60 s in the past allows for clock drift. */
const JWT_BACKDATE_S = 60;
const JWT_LIFETIME_S = 9 * 60;
/** A JWT is signed again when less than this is left, so one never expires in flight. */
const JWT_RENEW_BEFORE_S = 2 * 60;
/** An installation token is replaced a minute before it expires (issue 12, item 3). */
const TOKEN_RENEW_BEFORE_MS = 60_000;

export interface PlatformAppOptions extends Omit<PlatformClientOptions, 'token' | 'clientId' | 'clientSecret' | 'serverSide' | 'auth' | 'identity'> {
  /** The app's id; else `GANTRY_APP_ID`. */
  appId?: string | number;
  /** The app's private key (PEM text or a key object); else `privateKeyFile`, `GANTRY_APP_PRIVATE_KEY`, `GANTRY_APP_PRIVATE_KEY_FILE`. */
  privateKey?: string | Buffer | KeyObject;
  /** A PEM file holding the private key. */
  privateKeyFile?: string;
}

const platformAppOptionKeys = optionKeys<PlatformAppOptions>({ ...sharedPlatformOptionKeys, appId: true, privateKey: true, privateKeyFile: true });

export interface InstallationToken {
  token: string;
  expiresAt: Date;
  permissions: Record<string, string> | undefined;
  repositorySelection: string | undefined;
}

interface Cached {
  token: string;
  expiresAtMs: number;
  answer: InstallationToken;
}

function checkId(where: string, name: string, value: unknown): string {
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string' || !/^[1-9]\d{0,18}$/.test(text.trim())) {
    throw new UsageError(
      `${where}: ${name} must be a whole number above 0 (as the platform shows it), got ${JSON.stringify(typeof value === 'string' ? value.slice(0, 40) : value)}`,
      { code: 'INVALID_ARGUMENT' },
    );
  }
  return text.trim();
}

/** The private key as a key object; a refusal never quotes what it was given. */
function loadKey(where: string, options: PlatformAppOptions, env: NodeJS.ProcessEnv): KeyObject {
  let material: string | Buffer | KeyObject;
  let from: string;
  const settings = settingsReader(platformSettings, { env });
  const key = settings.pick('privateKey', options.privateKey, 'the privateKey option');
  const file = settings.pick('privateKeyFile', options.privateKeyFile);
  // The options first, then the environment; in each, the key itself before a file.
  const chosen = [key, file].find((picked) => picked?.origin === 'option') ?? key ?? file;
  if (chosen !== undefined && chosen === key) {
    [material, from] = [chosen.value as string | Buffer | KeyObject, chosen.from];
  } else if (chosen !== undefined) {
    const path = chosen.value;
    expectString(where, 'privateKeyFile', path, 'the path of a PEM file');
    [material, from] = [
      readLocalTextSync(path, { what: `${where}: the app's private key file${chosen.origin === 'option' ? '' : ` (${chosen.from})`}` }),
      path,
    ];
  } else {
    throw new UsageError(
      `${where}: no private key for the app: pass privateKey or privateKeyFile, or set GANTRY_APP_PRIVATE_KEY_FILE (or GANTRY_APP_PRIVATE_KEY)`,
      {
        code: 'PLATFORM_APP_NO_KEY',
        hint: "the key is the .pem file made on the app's settings page (gantry dev writes one and prints its path)",
      },
    );
  }
  if (typeof material === 'string' || Buffer.isBuffer(material)) {
    const text = material.toString();
    registerSecret(text.trim());
    try {
      material = createPrivateKey(text);
    } catch {
      throw new UsageError(`${where}: the app's private key from ${from} is not a PEM private key`, {
        code: 'PLATFORM_APP_BAD_KEY',
        hint: 'give the whole .pem file, from -----BEGIN … PRIVATE KEY----- to the END line',
      });
    }
  }
  if (typeof material !== 'object' || material === null || (material as KeyObject).type !== 'private') {
    throw new UsageError(`${where}: the app's private key from ${from} is not a private key`, { code: 'PLATFORM_APP_BAD_KEY' });
  }
  if (material.asymmetricKeyType !== 'rsa') {
    throw new UsageError(
      `${where}: the app's private key from ${from} is ${material.asymmetricKeyType ?? 'not asymmetric'}; the platform signs apps' JWTs with RSA (RS256)`,
      { code: 'PLATFORM_APP_BAD_KEY' },
    );
  }
  return material;
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

export class PlatformApp {
  readonly appId: string;
  readonly baseUrl: string;
  private readonly key: KeyObject;
  private readonly options: PlatformAppOptions;
  private readonly clock: NonNullable<PlatformClientOptions['clock']>;
  private readonly logger: Logger;
  private readonly tokens = new Map<string, Cached>();
  private readonly pending = new Map<string, Promise<Cached>>();
  private readonly clients = new Map<string, PlatformClient>();
  private jwtCache: { jwt: string; expS: number } | undefined;
  /** The app as itself (its JWT): `/app`, `/app/installations`, installation tokens. */
  readonly appClient: PlatformClient;

  constructor(options: PlatformAppOptions = {}) {
    const where = 'PlatformApp';
    expectOptions(where, options);
    refuseUnknownOptions(where, options, platformAppOptionKeys);
    const env = options.env ?? process.env;
    const appId = settingsReader(platformSettings, { env }).pick('appId', options.appId)?.value as string | number | undefined;
    if (appId === undefined)
      throw new UsageError(`${where}: no app id: pass appId or set GANTRY_APP_ID`, {
        code: 'PLATFORM_APP_NO_ID',
        hint: "the id is on the app's settings page (gantry dev prints its app's)",
      });
    this.appId = checkId(where, 'appId', appId);
    this.key = loadKey(where, options, env);
    this.options = options;
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? getLogger();
    const { appId: _id, privateKey: _key, privateKeyFile: _file, ...clientOptions } = options;
    this.appClient = new PlatformClient({ ...clientOptions, auth: this.jwtSource() });
    this.baseUrl = this.appClient.baseUrl;
  }

  /** A JWT for the app, signed now or reused while it has more than two minutes left. */
  jwt(): string {
    const nowS = Math.floor(this.clock.now() / 1000);
    if (this.jwtCache && this.jwtCache.expS - nowS > JWT_RENEW_BEFORE_S) return this.jwtCache.jwt;
    const claims = { iat: nowS - JWT_BACKDATE_S, exp: nowS + JWT_LIFETIME_S, iss: this.appId };
    const unsigned = `${b64({ alg: 'RS256', typ: 'JWT' })}.${b64(claims)}`;
    const jwt = `${unsigned}.${sign('sha256', Buffer.from(unsigned), this.key).toString('base64url')}`;
    registerSecret(jwt);
    this.jwtCache = { jwt, expS: claims.exp };
    return jwt;
  }

  private jwtSource(): PlatformTokenSource {
    return {
      kind: 'app',
      key: credentialKey(`app:${this.appId}`),
      describe: `app ${this.appId}`,
      renewHint: `the platform refused the app's JWT: check the app id (${this.appId}) and that the private key is the app's current one (a key deleted on the app's settings page stops working), and that this machine's clock is right`,
      token: () => Promise.resolve(this.jwt()),
      renew: async () => {
        this.jwtCache = undefined;
      },
    };
  }

  /**
   * An installation token, from the cache while it has more than a minute left, else from the platform (one request
   * however many callers ask at once).
   */
  async installationToken(installationId: string | number, options: { signal?: AbortSignal } = {}): Promise<InstallationToken> {
    return (await this.cachedToken(checkId('PlatformApp.installationToken', 'installationId', installationId), options.signal)).answer;
  }

  private async cachedToken(id: string, signal?: AbortSignal): Promise<Cached> {
    const cached = this.tokens.get(id);
    if (cached && cached.expiresAtMs - this.clock.now() > TOKEN_RENEW_BEFORE_MS) return cached;
    let pending = this.pending.get(id);
    if (!pending) {
      pending = this.fetchToken(id, signal).finally(() => this.pending.delete(id));
      this.pending.set(id, pending);
    }
    return pending;
  }

  private async fetchToken(id: string, signal?: AbortSignal): Promise<Cached> {
    const response = await this.appClient.request<Record<string, unknown>>('POST', '/app/installations/{installation_id}/access_tokens', {
      params: { installation_id: id },
      creates: false,
      ...(signal ? { signal } : {}),
    });
    const body = response.body;
    const token = body && typeof body === 'object' ? body.token : undefined;
    const expiresAtMs = body && typeof body === 'object' && typeof body.expires_at === 'string' ? Date.parse(body.expires_at) : Number.NaN;
    if (typeof token !== 'string' || token === '' || /\s/.test(token) || !Number.isFinite(expiresAtMs)) {
      throw new ProtocolError(
        `POST /app/installations/${id}/access_tokens answered ${response.status} without a token and its expires_at`,
        'check that the address points at the platform API',
      );
    }
    registerSecret(token);
    const answer: InstallationToken = {
      token,
      expiresAt: new Date(expiresAtMs),
      permissions: body.permissions && typeof body.permissions === 'object' ? (body.permissions as Record<string, string>) : undefined,
      repositorySelection: typeof body.repository_selection === 'string' ? body.repository_selection : undefined,
    };
    const cached = { token, expiresAtMs, answer };
    this.tokens.set(id, cached);
    this.logger.debug(`platform: app ${this.appId}: a token for installation ${id} until ${answer.expiresAt.toISOString()}`);
    return cached;
  }

  /**
   * A client acting as the installation: its own budget (5,000 an hour and up, RATE-PRI-INSTALLATION-*; give the
   * installation's repositories and users for the exact figure), its token fetched and renewed as needed. One client
   * per installation, so every caller shares its queue.
   */
  clientFor(installationId: string | number, identity: Omit<IdentityOptions, 'kind'> = {}): PlatformClient {
    const where = 'PlatformApp.clientFor';
    const id = checkId(where, 'installationId', installationId);
    expectObject(where, 'identity', identity, 'an object: { enterprise?, repositories?, users? }');
    const existing = this.clients.get(id);
    if (existing) return existing;
    const { appId: _id, privateKey: _key, privateKeyFile: _file, ...clientOptions } = this.options;
    const source: PlatformTokenSource = {
      kind: 'installation',
      key: credentialKey(`installation:${this.appId}:${id}`),
      describe: `app ${this.appId}'s installation ${id}`,
      renewHint: `the platform refused a fresh token for installation ${id} of app ${this.appId}: the app may have been uninstalled or suspended there`,
      token: async (signal) => (await this.cachedToken(id, signal)).token,
      renew: async (token) => {
        if (this.tokens.get(id)?.token === token) this.tokens.delete(id);
      },
    };
    const client = new PlatformClient({ ...clientOptions, baseUrl: this.baseUrl, auth: source, identity });
    this.clients.set(id, client);
    return client;
  }

  /** The app's installations (`GET /app/installations`, every page). */
  async installations(options: { limit?: number } = {}): Promise<Array<{ id: number; account: string | undefined }>> {
    const found: Array<{ id: number; account: string | undefined }> = [];
    for await (const item of this.appClient.paginate<Record<string, unknown>>('/app/installations', options)) {
      const account = item.account && typeof item.account === 'object' ? (item.account as Record<string, unknown>).login : undefined;
      if (typeof item.id === 'number') found.push({ id: item.id, account: typeof account === 'string' ? account : undefined });
    }
    return found;
  }

  /** The app's own client and every installation's made so far: whose budgets the metrics read. */
  get clientsInUse(): PlatformClient[] {
    return [this.appClient, ...this.clients.values()];
  }

  /** What logging the app shows: its id and address, never a key, JWT or token. */
  toJSON(): Record<string, unknown> {
    return { appId: this.appId, baseUrl: this.baseUrl, installations: [...this.clients.keys()] };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `PlatformApp ${JSON.stringify(this.toJSON())}`;
  }

  close(): void {
    this.appClient.close();
    for (const client of this.clients.values()) client.close();
    this.clients.clear();
  }
}
