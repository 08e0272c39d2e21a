// The embedded platform API: GitHub's REST API renamed (spec §D, §Authentication, §Errors, §Limits), enforcing the
// primary and secondary rate limits per identity and counting every violation, with fault injection and `/_gantry/`
// admin endpoints for tests. It shares no code with lib/platform (the client): a second, independent reading of the spec.
import { createHash, randomBytes, type KeyObject } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { UsageError } from '../../lib/errors.js';
import { applyFault, checkFault, FaultSet, type Fault } from '../kit/faults.js';
import { close, listen, parseJson, readBody as readRaw, RouteTable, sendReply, type ReplyStyle } from '../kit/index.js';
import { ApiFailure, apiTime, DOCS, noAdminEndpoint, PlatformState, type AdminRoute, type RepositorySpec, type Reply, type RouteDef } from './api.js';
import {
  AuthError,
  installationBudget,
  newToken,
  parseAuthorization,
  publicKeyOf,
  verifyAppJwt,
  type AppSpec,
  type AppWebhookSpec,
  type Identity,
  type InstallationSpec,
  type OAuthAppSpec,
  type TokenRecord,
  type TokenSpec,
} from './identity.js';
import { FixedWindow, HOUR_MS, MINUTE_MS, SlidingWindow, SPEC_LIMITS, type PlatformLimits, type Resource } from './limits.js';
import { Protection, type EnvironmentSpec, type ProtectedDeploymentReport } from './protection.js';
import { Webhooks, type DeliveryReport, type RepositoryHookSpec } from './webhooks.js';

export interface PlatformServerOptions {
  host?: string;
  /** Default 0 (an ephemeral port). */
  port?: number;
  /** Multiplies every limit window (the hour, the minute): 0.01 makes the hour 36 s. Default 1; must be > 0. */
  windowScale?: number;
  /** Overrides of the spec's numbers (RATE-SEC-MAY-CHANGE); the spec's are the defaults. */
  limits?: Partial<PlatformLimits>;
  /** The status of a primary and of a secondary limit response: 403 (default, as GitHub's REST API answers) or 429. */
  limitStatus?: { primary?: 403 | 429; secondary?: 403 | 429 };
  /** Which secondary limits send `retry-after` (RATE-HDR-RETRY-AFTER "some"): default points and creation, not concurrency. */
  retryAfter?: { concurrency?: boolean; points?: boolean; creation?: boolean };
  repositories?: RepositorySpec[];
  /** Tokens accepted from the start; a token without a value gets a random one (see `tokens()`). */
  tokens?: TokenSpec[];
  apps?: AppSpec[];
  oauthApps?: OAuthAppSpec[];
  /** How long an installation token lives; default one hour (never scaled). */
  installationTokenTtlMs?: number;
  faults?: Fault[];
  /** Every admitted request takes at least this long (ms), holding its concurrency slot. */
  latencyMs?: number;
  /** One line per request (method, path, status; never a credential). */
  log?: (line: string) => void;
  /** Repository webhooks from the start (webhooks.ts; POST /repos/{owner}/{repo}/hooks adds more). */
  hooks?: RepositoryHookSpec[];
  /** Environments and their custom deployment protection rules (protection.ts). */
  environments?: EnvironmentSpec[];
  /** How long a webhook delivery may take; default 10 s, GitHub's. */
  webhookTimeoutMs?: number;
  /** The largest delivery body sent; default 25 MiB (HOOK-LIM-PAYLOAD-25MB). */
  webhookMaxPayloadBytes?: number;
}

export type ViolationKind = 'primary' | 'concurrency' | 'points' | 'creation-minute' | 'creation-hour';

export interface Violation {
  kind: ViolationKind;
  /** The budget's identity: `ip:127.0.0.1`, `user:dev`, `installation:1`, `workflow:owner/repo`, `oauth-app:<client id>`, `app:1`. */
  identity: string;
  resource: Resource;
  endpoint: string;
  status: number;
  retryAfter?: number;
  at: string;
}

export interface ViolationReport {
  total: number;
  byKind: Record<ViolationKind, number>;
  /** The latest 1,000. */
  violations: Violation[];
}

export interface PlatformStats {
  requests: number;
  /** The most requests of one identity in flight at once, by identity. */
  maxInFlight: Record<string, number>;
}

export interface PlatformServer {
  name: 'platform';
  url: string;
  credentials: Record<string, string>;
  env?: Record<string, string>;
  stop(): Promise<void>;
  violations(): ViolationReport;
  /** Forgets the violations counted so far. */
  clearViolations(): void;
  /** Opens fresh windows for every budget (and forgets violations and stats). */
  resetLimits(): void;
  setFaults(faults: Fault[]): void;
  addFaults(faults: Fault[]): void;
  faults(): ReturnType<FaultSet['list']>;
  /** Accepts a new token; returns its value. */
  issueToken(spec: TokenSpec): string;
  /** Every later use of the token gets 401 Bad credentials (RATE-REVOKED-TOKEN-401). */
  revokeToken(token: string): boolean;
  addRepository(spec: RepositorySpec): void;
  stats(): PlatformStats;
  /** Webhook deliveries and protected deployments (also at /_gantry/deliveries and /_gantry/protection). */
  webhooks: {
    deliveries(): DeliveryReport;
    protection(): ProtectedDeploymentReport[];
    /** Resolves once no delivery is in flight. */
    idle(): Promise<void>;
    /** Sets an app's webhook at run time, as PATCH /app/hook/config does. */
    setAppWebhook(appId: number, spec: AppWebhookSpec): void;
  };
}

const ADMIN_PREFIX = '/_gantry/';
const MAX_BODY = 1024 * 1024;
/** Every reply states its length; a body is JSON. */
const STYLE: ReplyStyle = { json: 'application/json; charset=utf-8', emptyLength: 'zero', framing: 'style' };
const MAX_VIOLATIONS = 1000;
const RATE_DOCS = `${DOCS}/using-the-rest-api/rate-limits-for-the-rest-api`;
const SECONDARY_DOCS = `${RATE_DOCS}#about-secondary-rate-limits`;
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export const DEFAULT_REPOSITORIES: RepositorySpec[] = [
  { owner: 'gantry', name: 'demo' },
  { owner: 'gantry', name: 'site' },
  { owner: 'gantry', name: 'private-infra', private: true },
];

interface Budget {
  core: FixedWindow;
  search: FixedWindow;
  graphql: FixedWindow;
  points: Map<string, SlidingWindow>;
  creationMinute: SlidingWindow;
  creationHour: SlidingWindow;
  inFlight: number;
  maxInFlight: number;
}

export async function startPlatformServer(options: PlatformServerOptions = {}): Promise<PlatformServer> {
  const scale = options.windowScale ?? 1;
  if (!(typeof scale === 'number' && Number.isFinite(scale) && scale > 0 && scale <= 1000))
    throw new UsageError(`windowScale must be a number above 0 (at most 1000), got ${String(scale)}`);
  const limits: PlatformLimits = { ...SPEC_LIMITS, ...(options.limits ?? {}) };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 0) throw new UsageError(`limit ${name} must be a whole number of at least 0, got ${String(value)}`);
  }
  const hourMs = HOUR_MS * scale;
  const minuteMs = MINUTE_MS * scale;
  const primaryStatus = options.limitStatus?.primary ?? 403;
  const secondaryStatus = options.limitStatus?.secondary ?? 403;
  const retryAfterOn = { concurrency: false, points: true, creation: true, ...(options.retryAfter ?? {}) };
  const tokenTtlMs = options.installationTokenTtlMs ?? HOUR_MS;
  const log = options.log ?? (() => {});
  const faults = new FaultSet();
  faults.set(options.faults ?? []);

  const apps = new Map<number, AppSpec & { key: KeyObject }>();
  const installations = new Map<number, { app: AppSpec; installation: InstallationSpec }>();
  for (const app of options.apps ?? []) {
    apps.set(app.id, { ...app, key: publicKeyOf(app) });
    for (const installation of app.installations) installations.set(installation.id, { app, installation });
  }
  const oauthApps = new Map((options.oauthApps ?? []).map((a) => [a.clientId, a]));
  const tokens = new Map<string, TokenRecord>();
  const issueToken = (spec: TokenSpec): string => {
    if (spec.kind === 'installation' && (spec.installationId === undefined || !installations.has(spec.installationId)))
      throw new UsageError('an installation token needs the id of an installation the server knows');
    if (spec.kind === 'workflow' && !spec.repository) throw new UsageError('a workflow token needs its repository (owner/name)');
    const token = spec.token ?? newToken(spec.kind);
    tokens.set(token, { ...spec, token, revoked: false });
    return token;
  };

  const budgets = new Map<string, Budget>();
  const budgetOf = (identity: Identity): Budget => {
    let budget = budgets.get(identity.key);
    if (!budget) {
      budget = {
        core: new FixedWindow(identity.primary, hourMs),
        search: new FixedWindow(identity.search, minuteMs),
        graphql: new FixedWindow(limits.graphql, hourMs),
        points: new Map(),
        creationMinute: new SlidingWindow(limits.creationPerMinute, minuteMs),
        creationHour: new SlidingWindow(limits.creationPerHour, hourMs),
        inFlight: 0,
        maxInFlight: 0,
      };
      budgets.set(identity.key, budget);
    }
    return budget;
  };
  let violations: Violation[] = [];
  const byKind = (): Record<ViolationKind, number> => ({ primary: 0, concurrency: 0, points: 0, 'creation-minute': 0, 'creation-hour': 0 });
  let counts = byKind();
  let requests = 0;
  const record = (violation: Violation) => {
    violations.push(violation);
    counts[violation.kind]++;
    if (violations.length > MAX_VIOLATIONS) violations.splice(0, violations.length - MAX_VIOLATIONS);
  };

  // ---- identities ----
  const unauthenticated = (req: IncomingMessage): Identity => {
    const ip = req.socket.remoteAddress ?? 'unknown';
    return { kind: 'unauthenticated', key: `ip:${ip}`, primary: limits.unauthenticated, search: limits.searchUnauthenticated, describe: ip };
  };
  const identityOfToken = (record: TokenRecord, now: number): Identity => {
    if (record.revoked || (record.expiresAt !== undefined && now >= record.expiresAt)) throw new AuthError('Bad credentials');
    switch (record.kind) {
      case 'personal':
      case 'user-to-server':
      case 'oauth': {
        const login = record.login ?? 'dev';
        return {
          kind: 'user',
          key: `user:${login}`,
          primary: record.enterprise ? limits.userEnterprise : limits.user,
          search: limits.searchAuthenticated,
          describe: `user ID ${userNumber(login)}`,
          token: record,
        };
      }
      case 'workflow': {
        const repository = record.repository!;
        return {
          kind: 'workflow',
          key: `workflow:${repository.toLowerCase()}`,
          primary: record.enterprise ? limits.workflowEnterprise : limits.workflow,
          search: limits.searchAuthenticated,
          describe: `installation ID 0 (the workflow token of ${repository})`,
          repositories: (fullName) => fullName.toLowerCase() === repository.toLowerCase(),
          token: record,
        };
      }
      case 'installation': {
        const found = installations.get(record.installationId!)!;
        const { installation } = found;
        const reach = installationReach(installation);
        const reachable = state.repositoryNames().filter((name) => reach(name, name.split('/')[0]!)).length;
        return {
          kind: 'installation',
          key: `installation:${installation.id}`,
          primary: installationBudget(limits, installation, reachable),
          search: limits.searchAuthenticated,
          describe: `installation ID ${installation.id}`,
          repositories: reach,
          token: record,
          appId: found.app.id,
        };
      }
    }
  };
  const authenticate = (req: IncomingMessage, appRoute: boolean, now: number): Identity => {
    const credentials = parseAuthorization(req.headers.authorization);
    if (credentials.scheme === 'none') {
      if (appRoute) throw new AuthError('A JSON web token could not be decoded');
      return unauthenticated(req);
    }
    if (credentials.scheme === 'bad') throw new AuthError('Bad credentials');
    if (credentials.scheme === 'basic') {
      const oauthApp = oauthApps.get(credentials.user);
      if (oauthApp) {
        if (oauthApp.clientSecret !== credentials.password) throw new AuthError('Bad credentials');
        return {
          kind: 'oauth-app',
          key: `oauth-app:${oauthApp.clientId}`,
          primary: oauthApp.enterprise ? limits.oauthAppEnterprise : limits.oauthApp,
          search: limits.searchAuthenticated,
          describe: `app ${oauthApp.clientId}`,
        };
      }
      const record = tokens.get(credentials.password);
      if (!record) throw new AuthError('Bad credentials');
      return identityOfToken(record, now);
    }
    const record = tokens.get(credentials.token);
    if (record) {
      if (appRoute) throw new AuthError('A JSON web token could not be decoded');
      return identityOfToken(record, now);
    }
    if (credentials.token.split('.').length === 3) {
      const { app } = verifyAppJwt(credentials.token, apps, now);
      if (!appRoute) throw new ApiFailure(403, 'Resource not accessible by integration');
      return { kind: 'app', key: `app:${app.id}`, primary: limits.app, search: limits.searchAuthenticated, describe: `app ID ${app.id}`, appId: app.id };
    }
    throw new AuthError('Bad credentials');
  };

  // ---- routes the server itself answers: /rate_limit and the app endpoints ----
  const rateJson = (window: FixedWindow, resource: Resource, now: number) => {
    const s = window.peek(now);
    return { limit: s.limit, used: s.used, remaining: s.remaining, reset: Math.ceil(s.resetMs / 1000), resource };
  };
  const extraRoutes: RouteDef[] = [
    {
      method: 'GET',
      template: '/rate_limit',
      uncounted: true,
      handler: (ctx) => {
        const budget = budgetOf(ctx.identity);
        const now = Date.now();
        const core = rateJson(budget.core, 'core', now);
        return {
          status: 200,
          body: { resources: { core, search: rateJson(budget.search, 'search', now), graphql: rateJson(budget.graphql, 'graphql', now) }, rate: core },
        };
      },
    },
    {
      method: 'GET',
      template: '/app',
      app: true,
      handler: (ctx) => ({
        status: 200,
        body: {
          id: ctx.identity.appId,
          slug: `app-${ctx.identity.appId}`,
          name: `app-${ctx.identity.appId}`,
          owner: { login: 'gantry', type: 'Organization' },
        },
      }),
    },
    {
      method: 'GET',
      template: '/app/installations',
      app: true,
      handler: (ctx) => ({
        status: 200,
        body: [...installations.values()].filter((i) => i.app.id === ctx.identity.appId).map(({ installation }) => installationJson(installation, ctx.origin)),
      }),
    },
    {
      method: 'POST',
      template: '/app/installations/{installation_id}/access_tokens',
      app: true,
      handler: (ctx) => {
        const found = installations.get(Number(ctx.params.installation_id));
        if (!/^\d+$/.test(ctx.params.installation_id!) || !found || found.app.id !== ctx.identity.appId)
          throw new ApiFailure(404, 'Not Found', {}, `${DOCS}/apps/apps#create-an-installation-access-token-for-an-app`);
        const expiresAt = Date.now() + tokenTtlMs;
        const token = issueToken({ kind: 'installation', installationId: found.installation.id, expiresAt });
        const reach = installationReach(found.installation);
        return {
          status: 201,
          body: {
            token,
            expires_at: apiTime(expiresAt),
            permissions: { metadata: 'read', statuses: 'write', deployments: 'write', issues: 'write' },
            repository_selection: found.installation.repositories ? 'selected' : 'all',
            ...(found.installation.repositories
              ? {
                  repositories: state
                    .repositoryNames()
                    .filter((n) => reach(n, n.split('/')[0]!))
                    .map((full_name) => ({ full_name })),
                }
              : {}),
          },
        };
      },
    },
  ];
  const webhooks = new Webhooks({
    apps: options.apps ?? [],
    hooks: options.hooks ?? [],
    timeoutMs: options.webhookTimeoutMs,
    maxPayloadBytes: options.webhookMaxPayloadBytes,
    log,
  });
  const protection = new Protection(webhooks, { apps: options.apps ?? [], environments: options.environments ?? [] });
  const state = new PlatformState(options.repositories ?? DEFAULT_REPOSITORIES, [...extraRoutes, ...webhooks.routes(), ...protection.routes()]);
  webhooks.attach(state);
  protection.attach(state);
  for (const spec of options.tokens ?? []) issueToken(spec);

  // ---- answering ----
  const send = (res: ServerResponse, method: string, reply: Reply) => sendReply(res, reply, STYLE, method);
  const failure = (error: ApiFailure): Reply => ({
    status: error.status,
    body: { message: error.message, ...error.extra, documentation_url: error.documentation, status: String(error.status) },
  });
  const rateHeaders = (window: FixedWindow, resource: Resource, now: number): Record<string, string> => {
    const s = window.peek(now);
    return {
      'x-ratelimit-limit': String(s.limit),
      'x-ratelimit-remaining': String(s.remaining),
      'x-ratelimit-used': String(s.used),
      'x-ratelimit-reset': String(Math.ceil(s.resetMs / 1000)),
      'x-ratelimit-resource': resource,
    };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const method = (req.method ?? 'GET').toUpperCase();
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://platform.invalid');
    } catch {
      return send(res, method, { status: 400, body: { message: 'Bad Request', documentation_url: DOCS } });
    }
    if (url.pathname.startsWith(ADMIN_PREFIX)) return admin(req, res, url);
    requests++;
    const started = Date.now();
    const requestId = randomBytes(8).toString('hex').toUpperCase();
    res.setHeader('x-platform-request-id', requestId);
    res.on('close', () => log(`${method} ${url.pathname} ${res.statusCode} ${Date.now() - started}ms`));

    // Faults answer before the API, like a proxy in front of it; latency faults slow the API down, inside its limits.
    const decision = faults.decide(method, url.pathname);
    const action = decision.action;
    if (action) {
      if (action.kind === 'status') {
        const headers: Record<string, string> = action.retryAfter !== undefined ? { 'retry-after': String(action.retryAfter) } : {};
        return send(res, method, { status: action.status, headers, body: { message: action.message ?? faultMessage(action.status), documentation_url: DOCS } });
      }
      if (applyFault(action, req, res)) return; // reset, non-json, respond; truncate cuts the body below
    }

    const now = Date.now();
    const route = state.route(method, url.pathname);
    const resource: Resource = route?.resource ?? 'core';
    let identity: Identity;
    try {
      identity = authenticate(req, route?.app === true, now);
    } catch (error) {
      if (!(error instanceof AuthError) && !(error instanceof ApiFailure)) throw error;
      // A failed login counts against the address's unauthenticated budget, as GitHub's does.
      const ip = unauthenticated(req);
      const window = budgetOf(ip).core;
      window.take(now);
      const reply = failure(error instanceof ApiFailure ? error : new ApiFailure(error.status, error.message));
      return send(res, method, { ...reply, headers: rateHeaders(window, 'core', now) });
    }
    const budget = budgetOf(identity);
    const window = budget[resource];
    const endpoint = route?.endpoint ?? `${method} ${url.pathname}`;

    const answer = async (): Promise<Reply> => {
      try {
        if (!route) {
          const allowed = state.methodsAt(url.pathname);
          if (allowed.length > 0) throw new ApiFailure(405, 'Method Not Allowed');
          throw new ApiFailure(404, 'Not Found');
        }
        const body = method === 'GET' || method === 'HEAD' ? undefined : await readBody(req);
        return await route.handler({ identity, params: route.params, query: url.searchParams, body, origin: originOf(req), pathname: url.pathname });
      } catch (error) {
        if (!(error instanceof ApiFailure)) throw error;
        return failure(error);
      }
    };
    // A conditional read (If-None-Match) is answered before it is counted: reads change nothing, and a 304 does not
    // count against the primary limit, as the platform documents — while the budget lasts (a spent one still says so).
    const ifNoneMatch = req.headers['if-none-match'];
    const early = route && READ_METHODS.has(method) && typeof ifNoneMatch === 'string' ? await answer() : undefined;
    const notModified = early !== undefined && early.status === 200 && etagMatches(ifNoneMatch!, etagOf(early.body));
    const counted = !route?.uncounted && !(notModified && window.peek(now).remaining > 0);

    // Primary (RATE-ERR-PRIMARY): a spent budget answers 403/429 with remaining 0 until its reset.
    if (counted && !window.take(now)) {
      const headers = rateHeaders(window, resource, now);
      record({ kind: 'primary', identity: identity.key, resource, endpoint, status: primaryStatus, at: apiTime(now) });
      const good =
        identity.kind === 'unauthenticated'
          ? " (But here's the good news: Authenticated requests get a higher rate limit. Check out the documentation for more details.)"
          : '';
      return send(res, method, {
        status: primaryStatus,
        headers,
        body: { message: `API rate limit exceeded for ${identity.describe}.${good}`, documentation_url: RATE_DOCS },
      });
    }
    const headers = rateHeaders(window, resource, now);

    // Secondary (RATE-ERR-SECONDARY): concurrency, points per endpoint, content creation.
    budget.inFlight++;
    budget.maxInFlight = Math.max(budget.maxInFlight, budget.inFlight);
    res.on('close', () => budget.inFlight--);
    const secondary = (kind: Exclude<ViolationKind, 'primary'>, waitMs: number | undefined) => {
      const retryAfter = waitMs === undefined ? undefined : Math.max(1, Math.ceil(waitMs / 1000));
      record({
        kind,
        identity: identity.key,
        resource,
        endpoint,
        status: secondaryStatus,
        ...(retryAfter !== undefined ? { retryAfter } : {}),
        at: apiTime(now),
      });
      send(res, method, {
        status: secondaryStatus,
        headers: { ...headers, ...(retryAfter !== undefined ? { 'retry-after': String(retryAfter) } : {}) },
        body: {
          message: `You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to Platform Support for help, please include the request ID ${requestId}.`,
          documentation_url: SECONDARY_DOCS,
        },
      });
    };
    if (budget.inFlight > limits.concurrency) return secondary('concurrency', retryAfterOn.concurrency ? minuteMs : undefined);
    const cost = READ_METHODS.has(method) ? 1 : 5;
    let points = budget.points.get(endpoint);
    if (!points) budget.points.set(endpoint, (points = new SlidingWindow(limits.pointsPerMinute, minuteMs)));
    const pointsWait = points.wait(now, cost);
    if (pointsWait > 0) return secondary('points', retryAfterOn.points ? pointsWait : undefined);
    if (route?.creation) {
      const minuteWait = budget.creationMinute.wait(now, 1);
      if (minuteWait > 0) return secondary('creation-minute', retryAfterOn.creation ? minuteWait : undefined);
      const hourWait = budget.creationHour.wait(now, 1);
      if (hourWait > 0) return secondary('creation-hour', retryAfterOn.creation ? hourWait : undefined);
      budget.creationMinute.add(now, 1);
      budget.creationHour.add(now, 1);
    }
    points.add(now, cost);

    const delay = decision.delayMs + (options.latencyMs ?? 0);
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));

    const reply = early ?? (await answer());
    // Every successful read carries a weak ETag of its body, for the conditional requests above.
    const validator: Record<string, string> =
      READ_METHODS.has(method) && reply.status === 200 ? { etag: etagOf(reply.body), vary: 'Accept, Authorization' } : {};
    if (notModified) return send(res, method, { status: 304, headers: { ...headers, ...validator } });
    send(res, method, { ...reply, headers: { ...headers, ...(reply.headers ?? {}), ...validator } });
  };

  let origin = '';
  const originOf = (req: IncomingMessage) => {
    const host = req.headers.host;
    return host && /^[A-Za-z0-9.\-:[\]]+$/.test(host) ? `http://${host}` : origin;
  };

  // ---- admin: violations, limits, faults, tokens, repositories; never limited, never faulted ----
  const ok = (body: unknown, status = 200): Reply => ({ status, body });
  const adminRoutes: AdminRoute[] = [
    { method: 'GET', template: '/_gantry/violations', handler: () => ok(server.violations()) },
    {
      method: 'DELETE',
      template: '/_gantry/violations',
      handler: () => {
        server.clearViolations();
        return ok(server.violations());
      },
    },
    {
      method: 'POST',
      template: '/_gantry/reset',
      handler: () => {
        server.resetLimits();
        return ok({ reset: true });
      },
    },
    { method: 'GET', template: '/_gantry/stats', handler: () => ok(server.stats()) },
    { method: 'GET', template: '/_gantry/faults', handler: () => ok({ faults: faults.list() }) },
    {
      method: 'DELETE',
      template: '/_gantry/faults',
      handler: () => {
        faults.set([]);
        return ok({ faults: [] });
      },
    },
    ...['POST', 'PUT'].map((method): AdminRoute => ({
      method,
      template: '/_gantry/faults',
      handler: async ({ req }) => {
        const body = await readBody(req);
        const list = (Array.isArray(body) ? body : [body]).map(checkFault);
        if (method === 'PUT') faults.set(list);
        else faults.add(list);
        return ok({ faults: faults.list() });
      },
    })),
    {
      method: 'POST',
      template: '/_gantry/tokens',
      handler: async ({ req }) => {
        const body = (await readBody(req)) as TokenSpec;
        if (typeof body !== 'object' || body === null || !['personal', 'user-to-server', 'oauth', 'installation', 'workflow'].includes(body.kind)) {
          return ok({ message: 'give {"kind": "personal" | "user-to-server" | "oauth" | "installation" | "workflow", ...}' }, 400);
        }
        return ok({ token: issueToken(body) }, 201);
      },
    },
    {
      method: 'POST',
      template: '/_gantry/tokens/revoke',
      handler: async ({ req }) => {
        const body = (await readBody(req)) as { token?: unknown };
        if (typeof body?.token !== 'string') return ok({ message: 'give {"token": "..."}' }, 400);
        const status = server.revokeToken(body.token) ? 200 : 404;
        return ok({ revoked: tokens.has(body.token) }, status);
      },
    },
    {
      method: 'POST',
      template: '/_gantry/repositories',
      handler: async ({ req }) => {
        state.addRepository((await readBody(req)) as RepositorySpec);
        return ok({ repositories: state.repositoryNames() }, 201);
      },
    },
    ...webhooks.adminRoutes(),
    ...protection.adminRoutes(),
  ];
  // As sent (no HEAD for GET): a method an endpoint does not name is its 404, or the 405 webhooks and protection give.
  const adminTable = new RouteTable(adminRoutes, { headAsGet: false });
  const admin = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const method = (req.method ?? 'GET').toUpperCase();
    const found = adminTable.match(method, url.pathname);
    const call = { req, method, pathname: url.pathname, params: 'route' in found ? found.params : {} };
    try {
      send(res, method, 'route' in found ? await found.route.handler(call) : noAdminEndpoint(call));
    } catch (error) {
      if (error instanceof ApiFailure) return send(res, method, failure(error));
      send(res, method, ok({ message: (error as Error).message }, 400));
    }
  };

  const listener = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      log(`error: ${req.method} ${(req.url ?? '').split('?')[0]}: ${(error as Error).stack ?? String(error)}`);
      if (!res.headersSent) send(res, req.method ?? 'GET', { status: 500, body: { message: 'Server Error', documentation_url: DOCS } });
      else res.destroy();
    });
  });
  listener.keepAliveTimeout = 5_000;
  listener.maxRequestsPerSocket = 0;
  ({ origin } = await listen(listener, options.host ?? '127.0.0.1', options.port ?? 0));
  log(`platform API listening on ${origin}`);

  const server: PlatformServer = {
    name: 'platform',
    url: origin,
    credentials: {},
    stop: async () => {
      await webhooks.stop();
      await close(listener);
    },
    violations: () => ({ total: Object.values(counts).reduce((a, b) => a + b, 0), byKind: { ...counts }, violations: [...violations] }),
    clearViolations: () => {
      violations = [];
      counts = byKind();
    },
    resetLimits: () => {
      // In-flight requests keep their slots: a budget with requests in flight keeps its count of them.
      for (const [key, budget] of budgets) {
        if (budget.inFlight > 0) {
          const fresh = { ...budget, points: new Map<string, SlidingWindow>(), maxInFlight: budget.inFlight };
          fresh.core = new FixedWindow(budget.core.limit, hourMs);
          fresh.search = new FixedWindow(budget.search.limit, minuteMs);
          fresh.graphql = new FixedWindow(budget.graphql.limit, hourMs);
          fresh.creationMinute = new SlidingWindow(limits.creationPerMinute, minuteMs);
          fresh.creationHour = new SlidingWindow(limits.creationPerHour, hourMs);
          budgets.set(key, fresh);
        } else budgets.delete(key);
      }
      server.clearViolations();
      requests = 0;
    },
    setFaults: (list) => faults.set(list),
    addFaults: (list) => faults.add(list),
    faults: () => faults.list(),
    issueToken,
    revokeToken: (token) => {
      const found = tokens.get(token);
      if (!found) return false;
      found.revoked = true;
      return true;
    },
    addRepository: (spec) => state.addRepository(spec),
    stats: () => ({ requests, maxInFlight: Object.fromEntries([...budgets].map(([key, b]) => [key, b.maxInFlight])) }),
    webhooks: {
      deliveries: () => webhooks.report(),
      protection: () => protection.report(),
      idle: () => webhooks.idle(),
      setAppWebhook: (appId, spec) => webhooks.setAppWebhook(appId, spec),
    },
  };
  return server;

  function installationReach(installation: InstallationSpec): (fullName: string, owner: string) => boolean {
    const selected = installation.repositories ? new Set(installation.repositories.map((r) => r.toLowerCase())) : undefined;
    return (fullName, owner) => (selected ? selected.has(fullName.toLowerCase()) : owner.toLowerCase() === installation.account.toLowerCase());
  }
}

function installationJson(installation: InstallationSpec, origin: string) {
  return {
    id: installation.id,
    account: { login: installation.account, type: 'Organization' },
    repository_selection: installation.repositories ? 'selected' : 'all',
    access_tokens_url: `${origin}/app/installations/${installation.id}/access_tokens`,
  };
}

function userNumber(login: string): number {
  let n = 0;
  for (const c of login) n = (n * 31 + c.charCodeAt(0)) % 10_000_000;
  return n;
}

/** A weak entity tag of a JSON body, `W/"<sha-256>"`, the form the platform sends. */
function etagOf(body: unknown): string {
  return `W/"${createHash('sha256')
    .update(body === undefined ? '' : JSON.stringify(body))
    .digest('hex')}"`;
}

/** If-None-Match against an ETag by the weak comparison (RFC 9110 §13.1.2): `*`, or one of a list, `W/` aside. */
function etagMatches(header: string, etag: string): boolean {
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  const wanted = opaque(etag);
  return header.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === wanted);
}

function faultMessage(status: number): string {
  if (status === 503) return 'Service Unavailable';
  if (status >= 500) return 'Server Error';
  return 'Injected fault';
}

/** The JSON of a request body; no body at all is `{}`. */
async function readBody(req: IncomingMessage): Promise<unknown> {
  const raw = await readRaw(req, { limit: MAX_BODY, tooLarge: () => new ApiFailure(413, 'Payload Too Large') });
  return parseJson(raw, { empty: 'no-bytes', notJson: () => new ApiFailure(400, 'Problems parsing JSON') });
}
