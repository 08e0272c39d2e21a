// The platform's webhooks (spec §C, HOOK-*), GitHub's REST API renamed: repository hooks (`/repos/{owner}/{repo}/hooks`)
// and an app's webhook (`/app/hook/config`), deliveries with every header of the spec's table signed over the exact body
// bytes, a delivery log with redelivery under the same GUID, the `ping` on creation, GitHub's 10 s budget per delivery
// and the 25 MB cap. Events: `status`, `deployment`, `deployment_status` (never for an inactive state), and
// `deployment_protection_rule` for protection.ts. Independent of the receiver (lib/webhooks): no shared code.
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import {
  ApiFailure,
  apiTime,
  DOCS,
  otherAdminMethods,
  pageReply,
  StateExtension,
  validationFailed,
  type AdminRoute,
  type Reply,
  type Repository,
  type RequestContext,
  type RouteDef,
  type StateEvent,
  type User,
} from './api.js';
import type { AppSpec, AppWebhookSpec, InstallationSpec } from './identity.js';

/** GitHub's budget: a delivery not answered within 10 s is failed ("timed out"). */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** HOOK-LIM-PAYLOAD-25MB: a body over 25 MB (MiB) is not delivered at all. */
export const MAX_PAYLOAD_BYTES = 25 * 1024 * 1024;
const MASK = '********';
/** Kept per hook (GitHub keeps three days); `/_gantry/deliveries` keeps the latest 5,000 of all. */
const MAX_LOG_PER_HOOK = 1000;
const MAX_ALL = 5000;
/** The most of a receiver's answer body kept in the log. */
const MAX_RESPONSE_KEPT = 64 * 1024;
const HOOKS_DOC = `${DOCS}/webhooks/repos`;
/** GitHub's zen sayings, sent in `ping`. */
const ZEN = [
  'Design for failure.',
  'Keep it logically awesome.',
  'Speak like a human.',
  'Non-blocking is better than blocking.',
  'Half measures are as bad as nothing at all.',
  'Responsive is better than fast.',
];
/** Events only an app receives (HOOK-WEBHOOK-TYPES "A"): a repository hook never gets them, even subscribed to `*`. */
const APP_ONLY_EVENTS = new Set(['deployment_protection_rule', 'deployment_review', 'platform_app_authorization', 'repository_dispatch', 'security_advisory']);

export interface RepositoryHookSpec {
  /** `owner/name`. */
  repository: string;
  url: string;
  /** `form` (GitHub's default) or `json`. */
  contentType?: 'json' | 'form';
  secret?: string;
  /** Default `["push"]`, as GitHub's. */
  events?: string[];
  active?: boolean;
  insecureSsl?: boolean;
}

export interface WebhookOptions {
  apps: AppSpec[];
  hooks: RepositoryHookSpec[];
  /** Per delivery; default 10 s (GitHub's). */
  timeoutMs?: number;
  /** Default 25 MiB (HOOK-LIM-PAYLOAD-25MB). */
  maxPayloadBytes?: number;
  log: (line: string) => void;
}

interface Hook {
  id: number;
  target: 'repository' | 'integration';
  /** Repository hooks: the repository's `owner/name` in lower case. */
  repoKey?: string;
  /** The repository's id (known once the hook has a repository in hand) or the app's id. */
  targetId?: number;
  appId?: number;
  url: string;
  contentType: 'json' | 'form';
  secret?: string;
  insecureSsl: boolean;
  /** Undefined: every event (an app without a list). */
  events?: string[];
  active: boolean;
  createdAt: string;
  updatedAt: string;
  lastResponse: { code: number | null; status: string; message: string | null };
  deliveries: Delivery[];
}

interface Delivery {
  id: number;
  guid: string;
  hook: Hook;
  event: string;
  action: string | null;
  installationId: number | null;
  repositoryId: number | null;
  redelivery: boolean;
  deliveredAt: string;
  durationMs: number;
  status: string;
  statusCode: number;
  pending: boolean;
  url: string;
  payload: Record<string, unknown>;
  payloadText: string;
  requestHeaders: Record<string, string>;
  responseHeaders: Record<string, string>;
  responseBody: string | null;
}

/** What `/_gantry/deliveries` lists: every delivery with its answer, and what was never sent and why. */
export interface DeliveryReport {
  deliveries: (ReturnType<typeof summary> & { hook_id: number; target_type: string; target_id: number | null; url: string; pending: boolean })[];
  dropped: DroppedDelivery[];
}

export interface DroppedDelivery {
  hook_id: number | null;
  target_type: 'repository' | 'integration';
  event: string;
  action: string | null;
  reason: string;
  at: string;
}

export interface AppDeliveryContext {
  repo: Repository;
  origin: string;
  installationId: number;
  sender?: User;
}

export class Webhooks extends StateExtension {
  private nextId = 1;
  private readonly repoHooks = new Map<string, Hook[]>();
  private readonly appHooks = new Map<number, Hook>();
  private readonly apps = new Map<number, AppSpec>();
  private readonly all: Delivery[] = [];
  private readonly dropped: DroppedDelivery[] = [];
  private readonly inFlight = new Map<Promise<void>, http.ClientRequest | undefined>();
  private readonly agent = randomBytes(4).toString('hex').slice(0, 7);
  private readonly timeoutMs: number;
  private readonly maxPayloadBytes: number;
  private stopped = false;

  constructor(private readonly options: WebhookOptions) {
    super();
    this.timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
    this.maxPayloadBytes = options.maxPayloadBytes ?? MAX_PAYLOAD_BYTES;
    for (const app of options.apps) {
      this.apps.set(app.id, app);
      this.appHooks.set(app.id, this.appHook(app.id, app.webhook));
    }
    for (const spec of options.hooks) {
      const url = checkUrl(spec.url);
      if (!url) throw new Error(`hook of ${spec.repository}: not an http(s) URL: ${spec.url}`);
      const key = spec.repository.toLowerCase();
      const list = this.repoHooks.get(key) ?? [];
      const now = apiTime();
      list.push({
        id: this.nextId++,
        target: 'repository',
        repoKey: key,
        url,
        contentType: spec.contentType ?? 'form',
        ...(spec.secret ? { secret: spec.secret } : {}),
        insecureSsl: spec.insecureSsl === true,
        events: spec.events ?? ['push'],
        active: spec.active ?? true,
        createdAt: now,
        updatedAt: now,
        lastResponse: { code: null, status: 'unused', message: null },
        deliveries: [],
      });
      this.repoHooks.set(key, list);
    }
  }

  /** Sets (or, with `url` empty, clears) an app's webhook at run time, as PATCH /app/hook/config does. */
  setAppWebhook(appId: number, spec: AppWebhookSpec): void {
    const hook = this.appHooks.get(appId);
    if (!hook) throw new Error(`no app ${appId}`);
    if (spec.url !== undefined) {
      const url = spec.url === '' ? '' : checkUrl(spec.url);
      if (url === undefined) throw new Error(`not an http(s) URL: ${spec.url}`);
      hook.url = url;
    }
    if (spec.contentType !== undefined) hook.contentType = spec.contentType;
    if (spec.secret !== undefined) {
      if (spec.secret === '') delete hook.secret;
      else hook.secret = spec.secret;
    }
    if (spec.insecureSsl !== undefined) hook.insecureSsl = spec.insecureSsl;
    if (spec.events !== undefined) hook.events = spec.events;
    hook.updatedAt = apiTime();
  }

  /** The installation of `appId` that reaches `repo`, if any. */
  installationFor(appId: number, repo: Repository): InstallationSpec | undefined {
    return this.apps.get(appId)?.installations.find((installation) => reaches(installation, repo));
  }

  /** Delivers an app-only event (deployment_protection_rule) to the app's webhook; the delivery's GUID, or why none was sent. */
  deliverToApp(appId: number, event: string, payload: Record<string, unknown>, context: AppDeliveryContext): { guid: string } | { reason: string } {
    const hook = this.appHooks.get(appId);
    const action = typeof payload.action === 'string' ? payload.action : null;
    const drop = (reason: string) => {
      this.drop({ hook_id: hook?.id ?? null, target_type: 'integration', event, action, reason, at: apiTime() });
      return { reason };
    };
    if (!hook) return drop(`no app ${appId}`);
    if (!hook.url) return drop(`app ${appId} has no webhook URL (set one with PATCH /app/hook/config)`);
    if (hook.events && !hook.events.includes(event) && !hook.events.includes('*')) return drop(`app ${appId} is not subscribed to ${event}`);
    const full = { ...payload, ...this.common(context.repo, context.origin, context.sender), installation: installationJson(context.installationId) };
    const delivery = this.deliver(hook, event, full, { installationId: context.installationId, repositoryId: context.repo.id });
    if (delivery) return { guid: delivery.guid };
    return { reason: this.stopped ? 'the platform server stopped' : this.dropped.at(-1)!.reason };
  }

  /** Every delivery (newest last) and what was dropped. */
  report(): DeliveryReport {
    return {
      deliveries: this.all.map((d) => ({
        ...summary(d),
        hook_id: d.hook.id,
        target_type: d.hook.target,
        target_id: d.hook.target === 'integration' ? d.hook.appId! : (d.repositoryId ?? null),
        url: d.url,
        pending: d.pending,
      })),
      dropped: [...this.dropped],
    };
  }

  /** Forgets the deliveries listed by report() (hooks keep their own logs). */
  clearReport(): void {
    this.all.length = 0;
    this.dropped.length = 0;
  }

  /** Resolves once no delivery is in flight. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight.keys()]);
  }

  /** Ends every delivery in flight (recorded as failed) and sends no more. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const request of this.inFlight.values()) request?.destroy(new Error('the platform server stopped'));
    await this.idle();
  }

  /** `/_gantry/deliveries` (GET lists, DELETE forgets); undefined for another path. */
  /** `/_gantry/deliveries`: the report, and DELETE forgets it. */
  adminRoutes(): AdminRoute[] {
    const template = '/_gantry/deliveries';
    return [
      { method: 'GET', template, handler: () => ({ status: 200, body: this.report() }) },
      {
        method: 'DELETE',
        template,
        handler: () => {
          this.clearReport();
          return { status: 200, body: this.report() };
        },
      },
      otherAdminMethods(template),
    ];
  }

  routes(): RouteDef[] {
    const hooksOf = (repo: Repository) => this.repoHooks.get(repo.fullName.toLowerCase()) ?? [];
    const hookOf = (ctx: RequestContext, repo: Repository): Hook => {
      const hook = hooksOf(repo).find((h) => String(h.id) === ctx.params.hook_id);
      if (!hook) throw new ApiFailure(404, 'Not Found', {}, `${HOOKS_DOC}#get-a-repository-webhook`);
      hook.targetId = repo.id;
      return hook;
    };
    const deliveryOf = (hook: Hook, id: string | undefined): Delivery => {
      const found = hook.deliveries.find((d) => String(d.id) === id);
      if (!found) throw new ApiFailure(404, 'Not Found', {}, `${HOOKS_DOC}#get-a-delivery-for-a-repository-webhook`);
      return found;
    };
    const appHookOf = (ctx: RequestContext): Hook => this.appHooks.get(ctx.identity.appId!)!;
    const list = (ctx: RequestContext, hook: Hook): Reply => {
      return pageReply([...hook.deliveries].reverse(), ctx, summary);
    };
    const redeliver = (hook: Hook, delivery: Delivery): Reply => {
      this.deliver(hook, delivery.event, delivery.payload, { installationId: delivery.installationId, repositoryId: delivery.repositoryId }, delivery);
      return { status: 202, body: {} };
    };
    return [
      {
        method: 'POST',
        template: '/repos/{owner}/{repo}/hooks',
        handler: (ctx) => {
          const repo = this.access(ctx);
          const input = objectBody(ctx);
          const doc = `${HOOKS_DOC}#create-a-repository-webhook`;
          if (input.name !== undefined && input.name !== 'web')
            throw validationFailed([{ resource: 'Hook', field: 'name', code: 'custom', message: 'Name must be "web"' }], doc);
          if (typeof input.config !== 'object' || input.config === null || Array.isArray(input.config))
            throw validationFailed([{ resource: 'Hook', field: 'config', code: input.config === undefined ? 'missing_field' : 'invalid' }], doc);
          const config = checkConfig(input.config as Record<string, unknown>, doc, 'whole');
          const events = input.events === undefined ? ['push'] : checkEvents(input.events, doc);
          if (input.active !== undefined && typeof input.active !== 'boolean')
            throw validationFailed([{ resource: 'Hook', field: 'active', code: 'invalid' }], doc);
          const list = hooksOf(repo);
          if (list.some((h) => h.url === config.url))
            throw validationFailed([{ resource: 'Hook', field: 'config', code: 'custom', message: 'Hook already exists on this repository' }], doc);
          const now = apiTime();
          const hook: Hook = {
            id: this.nextId++,
            target: 'repository',
            repoKey: repo.fullName.toLowerCase(),
            targetId: repo.id,
            url: config.url!,
            contentType: config.contentType ?? 'form',
            ...(config.secret ? { secret: config.secret } : {}),
            insecureSsl: config.insecureSsl ?? false,
            events: [...new Set(events)],
            active: input.active !== false,
            createdAt: now,
            updatedAt: now,
            lastResponse: { code: null, status: 'unused', message: null },
            deliveries: [],
          };
          list.push(hook);
          this.repoHooks.set(hook.repoKey!, list);
          // GitHub sends `ping` when a hook is created (the spec is silent).
          if (hook.active) this.ping(hook, repo, ctx);
          return { status: 201, body: hookJson(hook, repo, ctx.origin) };
        },
      },
      {
        method: 'GET',
        template: '/repos/{owner}/{repo}/hooks',
        handler: (ctx) => {
          const repo = this.access(ctx);
          return pageReply(hooksOf(repo), ctx, (h) => hookJson(h, repo, ctx.origin));
        },
      },
      {
        method: 'GET',
        template: '/repos/{owner}/{repo}/hooks/{hook_id}',
        handler: (ctx) => {
          const repo = this.access(ctx);
          return { status: 200, body: hookJson(hookOf(ctx, repo), repo, ctx.origin) };
        },
      },
      {
        method: 'PATCH',
        template: '/repos/{owner}/{repo}/hooks/{hook_id}',
        handler: (ctx) => {
          const repo = this.access(ctx);
          const hook = hookOf(ctx, repo);
          const input = objectBody(ctx);
          const doc = `${HOOKS_DOC}#update-a-repository-webhook`;
          // As GitHub's: `config` here replaces the whole configuration (a secret not given is removed).
          const config =
            input.config === undefined
              ? undefined
              : typeof input.config === 'object' && input.config !== null && !Array.isArray(input.config)
                ? checkConfig(input.config as Record<string, unknown>, doc, 'whole')
                : invalid('config', doc);
          const events = input.events === undefined ? undefined : checkEvents(input.events, doc);
          const add = input.add_events === undefined ? [] : checkEvents(input.add_events, doc, 'add_events');
          const remove = input.remove_events === undefined ? [] : checkEvents(input.remove_events, doc, 'remove_events');
          if (input.active !== undefined && typeof input.active !== 'boolean') invalid('active', doc);
          if (config && config.url !== hook.url && hooksOf(repo).some((h) => h !== hook && h.url === config.url))
            throw validationFailed([{ resource: 'Hook', field: 'config', code: 'custom', message: 'Hook already exists on this repository' }], doc);
          if (config) {
            hook.url = config.url!;
            hook.contentType = config.contentType ?? 'form';
            hook.insecureSsl = config.insecureSsl ?? false;
            if (config.secret) hook.secret = config.secret;
            else delete hook.secret;
          }
          let next = events ?? hook.events ?? [];
          next = [...new Set([...next, ...add])].filter((e) => !remove.includes(e));
          hook.events = next;
          if (typeof input.active === 'boolean') hook.active = input.active;
          hook.updatedAt = apiTime();
          return { status: 200, body: hookJson(hook, repo, ctx.origin) };
        },
      },
      {
        method: 'DELETE',
        template: '/repos/{owner}/{repo}/hooks/{hook_id}',
        handler: (ctx) => {
          const repo = this.access(ctx);
          const hook = hookOf(ctx, repo);
          this.repoHooks.set(
            hook.repoKey!,
            hooksOf(repo).filter((h) => h !== hook),
          );
          return { status: 204 };
        },
      },
      {
        method: 'GET',
        template: '/repos/{owner}/{repo}/hooks/{hook_id}/config',
        handler: (ctx) => {
          const repo = this.access(ctx);
          return { status: 200, body: configJson(hookOf(ctx, repo)) };
        },
      },
      {
        method: 'PATCH',
        template: '/repos/{owner}/{repo}/hooks/{hook_id}/config',
        handler: (ctx) => {
          const repo = this.access(ctx);
          const hook = hookOf(ctx, repo);
          this.patchConfig(hook, objectBody(ctx), `${HOOKS_DOC}#update-a-webhook-configuration-for-a-repository`, 'keys');
          return { status: 200, body: configJson(hook) };
        },
      },
      {
        method: 'POST',
        template: '/repos/{owner}/{repo}/hooks/{hook_id}/pings',
        handler: (ctx) => {
          const repo = this.access(ctx);
          this.ping(hookOf(ctx, repo), repo, ctx);
          return { status: 204 };
        },
      },
      {
        method: 'GET',
        template: '/repos/{owner}/{repo}/hooks/{hook_id}/deliveries',
        handler: (ctx) => list(ctx, hookOf(ctx, this.access(ctx))),
      },
      {
        method: 'GET',
        template: '/repos/{owner}/{repo}/hooks/{hook_id}/deliveries/{delivery_id}',
        handler: (ctx) => ({ status: 200, body: detail(deliveryOf(hookOf(ctx, this.access(ctx)), ctx.params.delivery_id)) }),
      },
      {
        method: 'POST',
        template: '/repos/{owner}/{repo}/hooks/{hook_id}/deliveries/{delivery_id}/attempts',
        handler: (ctx) => {
          const hook = hookOf(ctx, this.access(ctx));
          return redeliver(hook, deliveryOf(hook, ctx.params.delivery_id));
        },
      },
      // The app's own webhook (a JWT): its configuration and its deliveries.
      {
        method: 'GET',
        template: '/app/hook/config',
        app: true,
        handler: (ctx) => ({ status: 200, body: configJson(appHookOf(ctx)) }),
      },
      {
        method: 'PATCH',
        template: '/app/hook/config',
        app: true,
        handler: (ctx) => {
          const hook = appHookOf(ctx);
          this.patchConfig(hook, objectBody(ctx), `${DOCS}/apps/webhooks#update-a-webhook-configuration-for-an-app`, 'keys-or-no-url');
          return { status: 200, body: configJson(hook) };
        },
      },
      { method: 'GET', template: '/app/hook/deliveries', app: true, handler: (ctx) => list(ctx, appHookOf(ctx)) },
      {
        method: 'GET',
        template: '/app/hook/deliveries/{delivery_id}',
        app: true,
        handler: (ctx) => ({ status: 200, body: detail(deliveryOf(appHookOf(ctx), ctx.params.delivery_id)) }),
      },
      {
        method: 'POST',
        template: '/app/hook/deliveries/{delivery_id}/attempts',
        app: true,
        handler: (ctx) => {
          const hook = appHookOf(ctx);
          return redeliver(hook, deliveryOf(hook, ctx.params.delivery_id));
        },
      },
    ];
  }

  // ---- internals ----

  /** Hooks need admin rights on the repository: a workflow token has none (GitHub's GITHUB_TOKEN cannot manage hooks). */
  private access(ctx: RequestContext): Repository {
    const repo = this.state.repo(ctx, true);
    if (ctx.identity.kind === 'workflow') throw new ApiFailure(403, 'Resource not accessible by integration', {}, HOOKS_DOC);
    return repo;
  }

  private appHook(appId: number, spec: AppWebhookSpec | undefined): Hook {
    const url = spec?.url ? checkUrl(spec.url) : '';
    if (url === undefined) throw new Error(`app ${appId}: webhook URL is not an http(s) URL: ${spec!.url}`);
    const now = apiTime();
    return {
      id: this.nextId++,
      target: 'integration',
      targetId: appId,
      appId,
      url,
      contentType: spec?.contentType ?? 'json',
      ...(spec?.secret ? { secret: spec.secret } : {}),
      insecureSsl: spec?.insecureSsl === true,
      ...(spec?.events ? { events: spec.events } : {}),
      active: true,
      createdAt: now,
      updatedAt: now,
      lastResponse: { code: null, status: 'unused', message: null },
      deliveries: [],
    };
  }

  /** PATCH …/config: only the keys given change (`secret` "" or null removes it; an app's `url` "" stops its deliveries). */
  private patchConfig(hook: Hook, input: Record<string, unknown>, doc: string, mode: 'keys' | 'keys-or-no-url'): void {
    const config = checkConfig(input, doc, mode);
    if (config.url !== undefined) hook.url = config.url;
    if (config.contentType !== undefined) hook.contentType = config.contentType;
    if (config.insecureSsl !== undefined) hook.insecureSsl = config.insecureSsl;
    if ('secret' in input) {
      if (config.secret) hook.secret = config.secret;
      else delete hook.secret;
    }
    hook.updatedAt = apiTime();
  }

  protected onStateEvent(event: StateEvent): void {
    // HOOK-EV-DEPLOYMENT-STATUS: not fired for statuses in an inactive state.
    if (event.name === 'deployment_status' && event.status.state === 'inactive') return;
    const own = this.eventPayload(event);
    for (const hook of this.repoHooks.get(event.repo.fullName.toLowerCase()) ?? []) {
      if (!hook.active || !subscribed(hook, event.name)) continue;
      hook.targetId = event.repo.id;
      this.deliver(hook, event.name, { ...own, ...this.common(event.repo, event.origin, event.sender) }, { installationId: null, repositoryId: event.repo.id });
    }
    for (const [appId, hook] of this.appHooks) {
      const installation = this.installationFor(appId, event.repo);
      if (!installation || !hook.url || !subscribed(hook, event.name)) continue;
      const payload = { ...own, ...this.common(event.repo, event.origin, event.sender), installation: installationJson(installation.id) };
      this.deliver(hook, event.name, payload, { installationId: installation.id, repositoryId: event.repo.id });
    }
  }

  /** The event's own properties, as GitHub's payloads shape them. */
  private eventPayload(event: StateEvent): Record<string, unknown> {
    const { repo, origin } = event;
    switch (event.name) {
      case 'status': {
        const s = event.status;
        const api = `${origin}/repos/${repo.fullName}`;
        const branches = [...repo.branches].filter(([, sha]) => sha === event.sha).slice(0, 10);
        return {
          id: s.id,
          sha: event.sha,
          name: repo.fullName,
          target_url: s.target_url,
          avatar_url: null,
          context: s.context,
          description: s.description,
          state: s.state,
          commit: {
            sha: event.sha,
            node_id: Buffer.from(`Commit:${event.sha}`).toString('base64'),
            url: `${api}/commits/${event.sha}`,
            html_url: `${origin}/${repo.fullName}/commit/${event.sha}`,
            commit: { message: '', tree: { sha: event.sha, url: `${api}/git/trees/${event.sha}` }, url: `${api}/git/commits/${event.sha}` },
            parents: [],
          },
          branches: branches.map(([name, sha]) => ({ name, commit: { sha, url: `${api}/commits/${sha}` }, protected: false })),
          created_at: s.created_at,
          updated_at: s.created_at,
        };
      }
      case 'deployment':
        return { action: 'created', deployment: this.state.deploymentJson(repo, event.deployment, origin), workflow: null, workflow_run: null };
      case 'deployment_status':
        return {
          action: 'created',
          deployment_status: this.state.deploymentStatusJson(repo, event.deployment, event.status, origin),
          deployment: this.state.deploymentJson(repo, event.deployment, origin),
          check_run: null,
          workflow: null,
          workflow_run: null,
        };
    }
  }

  /** The common properties (HOOK-COMMON-PROPS): repository, sender, organization for an organization's repository. */
  private common(repo: Repository, origin: string, sender: User | undefined): Record<string, unknown> {
    return {
      repository: this.state.repoJson(repo, origin),
      ...(repo.owner.type === 'Organization'
        ? {
            organization: {
              login: repo.owner.login,
              id: repo.owner.id,
              node_id: Buffer.from(`Organization:${repo.owner.id}`).toString('base64'),
              url: `${origin}/orgs/${repo.owner.login}`,
            },
          }
        : {}),
      ...(sender
        ? {
            sender: {
              ...sender,
              node_id: Buffer.from(`${sender.type}:${sender.id}`).toString('base64'),
              url: `${origin}/users/${encodeURIComponent(sender.login)}`,
            },
          }
        : {}),
    };
  }

  private ping(hook: Hook, repo: Repository, ctx: RequestContext): void {
    const payload = {
      zen: ZEN[Math.floor(Math.random() * ZEN.length)],
      hook_id: hook.id,
      hook: hookJson(hook, repo, ctx.origin),
      ...this.common(repo, ctx.origin, this.state.creator(ctx.identity)),
    };
    this.deliver(hook, 'ping', payload, { installationId: null, repositoryId: repo.id });
  }

  private drop(entry: DroppedDelivery): void {
    this.dropped.push(entry);
    if (this.dropped.length > MAX_ALL) this.dropped.splice(0, this.dropped.length - MAX_ALL);
    this.options.log(`webhook ${entry.event} not delivered: ${entry.reason}`);
  }

  /**
   * Sends one delivery (or a redelivery of `again`: the same GUID and payload, `redelivery: true`, signed and encoded
   * with the hook's configuration as it is now). Undefined when the body is over the cap: such a payload is not
   * delivered at all (HOOK-LIM-PAYLOAD-25MB).
   */
  private deliver(
    hook: Hook,
    event: string,
    payload: Record<string, unknown>,
    meta: { installationId: number | null; repositoryId: number | null },
    again?: Delivery,
  ): Delivery | undefined {
    const action = typeof payload.action === 'string' ? payload.action : null;
    if (this.stopped) return undefined;
    const payloadText = again?.payloadText ?? JSON.stringify(payload);
    const body = Buffer.from(hook.contentType === 'form' ? new URLSearchParams({ payload: payloadText }).toString() : payloadText, 'utf8');
    if (body.length > this.maxPayloadBytes) {
      this.drop({
        hook_id: hook.id,
        target_type: hook.target,
        event,
        action,
        reason: `the payload is ${body.length} bytes, over the ${this.maxPayloadBytes}-byte cap (HOOK-LIM-PAYLOAD-25MB)`,
        at: apiTime(),
      });
      return undefined;
    }
    const guid = again?.guid ?? randomUUID();
    const headers: Record<string, string> = {
      Accept: '*/*',
      'User-Agent': `Platform-Hookshot/${this.agent}`,
      'X-Platform-Hook-ID': String(hook.id),
      'X-Platform-Event': event,
      'X-Platform-Delivery': guid,
      'X-Platform-Hook-Installation-Target-Type': hook.target,
      'X-Platform-Hook-Installation-Target-ID': String(hook.targetId ?? meta.repositoryId ?? ''),
    };
    if (hook.secret) {
      headers['X-Hub-Signature'] = `sha1=${createHmac('sha1', hook.secret).update(body).digest('hex')}`;
      headers['X-Hub-Signature-256'] = `sha256=${createHmac('sha256', hook.secret).update(body).digest('hex')}`;
    }
    headers['Content-Type'] = hook.contentType === 'form' ? 'application/x-www-form-urlencoded' : 'application/json';
    headers['Content-Length'] = String(body.length);
    const delivery: Delivery = {
      id: this.nextId++,
      guid,
      hook,
      event,
      action,
      installationId: meta.installationId,
      repositoryId: meta.repositoryId,
      redelivery: again !== undefined,
      deliveredAt: apiTime(),
      durationMs: 0,
      status: 'pending',
      statusCode: 0,
      pending: true,
      url: hook.url,
      payload: again?.payload ?? payload,
      payloadText,
      requestHeaders: headers,
      responseHeaders: {},
      responseBody: null,
    };
    hook.deliveries.push(delivery);
    if (hook.deliveries.length > MAX_LOG_PER_HOOK) hook.deliveries.splice(0, hook.deliveries.length - MAX_LOG_PER_HOOK);
    this.all.push(delivery);
    if (this.all.length > MAX_ALL) this.all.splice(0, this.all.length - MAX_ALL);
    // send() makes its request at once; it is kept so that stop() can end it.
    const entry = { request: undefined as http.ClientRequest | undefined };
    const done: Promise<void> = this.send(delivery, body, entry).finally(() => this.inFlight.delete(done));
    this.inFlight.set(done, entry.request);
    return delivery;
  }

  private send(delivery: Delivery, body: Buffer, entry: { request: http.ClientRequest | undefined }): Promise<void> {
    const started = process.hrtime.bigint();
    const { hook } = delivery;
    return new Promise<void>((resolve) => {
      let finished = false;
      const finish = (code: number, status: string, headers: Record<string, string>, text: string | null) => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        delivery.durationMs = Number(process.hrtime.bigint() - started) / 1e6;
        delivery.statusCode = code;
        delivery.status = status;
        delivery.responseHeaders = headers;
        delivery.responseBody = text;
        delivery.pending = false;
        hook.lastResponse = code >= 200 && code < 300 ? { code, status: 'active', message: 'OK' } : { code: code || null, status: 'failed', message: status };
        this.options.log(
          `webhook ${delivery.event} ${delivery.guid} → ${redactUrl(delivery.url)}: ${code || '-'} ${status} ${Math.round(delivery.durationMs)}ms`,
        );
        resolve();
      };
      let url: URL;
      try {
        url = new URL(delivery.url);
      } catch {
        return finish(0, 'invalid URL', {}, null);
      }
      const transport = url.protocol === 'https:' ? https : http;
      let request: http.ClientRequest;
      try {
        request = transport.request(url, {
          method: 'POST',
          headers: delivery.requestHeaders,
          agent: false,
          ...(url.protocol === 'https:' ? { rejectUnauthorized: !hook.insecureSsl } : {}),
        });
      } catch (error) {
        return finish(0, (error as Error).message, {}, null);
      }
      entry.request = request;
      // GitHub's budget: the whole exchange within 10 s, else "timed out" (HOOK-* are silent; GitHub documents it).
      const timer = setTimeout(() => {
        finish(0, 'timed out', {}, null);
        request.destroy();
      }, this.timeoutMs);
      request.on('response', (response) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        response.on('data', (chunk: Buffer) => {
          if (kept < MAX_RESPONSE_KEPT) {
            chunks.push(chunk.subarray(0, MAX_RESPONSE_KEPT - kept));
            kept += Math.min(chunk.length, MAX_RESPONSE_KEPT - kept);
          }
        });
        const headers = () => Object.fromEntries(Object.entries(response.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v ?? '')]));
        response.on('end', () => {
          const code = response.statusCode ?? 0;
          finish(code, code >= 200 && code < 300 ? 'OK' : `Invalid HTTP Response: ${code}`, headers(), Buffer.concat(chunks).toString('utf8'));
        });
        response.on('error', (error) =>
          finish(response.statusCode ?? 0, `the answer broke off: ${error.message}`, headers(), Buffer.concat(chunks).toString('utf8')),
        );
      });
      request.on('error', (error: NodeJS.ErrnoException) => {
        const status =
          error.code === 'ECONNREFUSED' || error.code === 'ENOTFOUND' || error.code === 'EHOSTUNREACH' ? 'failed to connect to host' : error.message;
        finish(0, status, {}, null);
      });
      request.end(body);
    });
  }
}

// ---- shapes and checks ----

function summary(d: Delivery) {
  return {
    id: d.id,
    guid: d.guid,
    delivered_at: d.deliveredAt,
    redelivery: d.redelivery,
    duration: Math.round(d.durationMs) / 1000,
    status: d.status,
    status_code: d.statusCode,
    event: d.event,
    action: d.action,
    installation_id: d.installationId,
    repository_id: d.repositoryId,
    throttled_at: null,
  };
}

function detail(d: Delivery) {
  return {
    ...summary(d),
    url: d.url,
    request: { headers: d.requestHeaders, payload: d.payload },
    response: { headers: d.responseHeaders, payload: d.responseBody },
  };
}

function configJson(hook: Hook) {
  return { content_type: hook.contentType, insecure_ssl: hook.insecureSsl ? '1' : '0', url: hook.url, ...(hook.secret ? { secret: MASK } : {}) };
}

function hookJson(hook: Hook, repo: Repository, origin: string) {
  const url = `${origin}/repos/${repo.fullName}/hooks/${hook.id}`;
  return {
    type: 'Repository',
    id: hook.id,
    name: 'web',
    active: hook.active,
    events: hook.events ?? [],
    config: configJson(hook),
    updated_at: hook.updatedAt,
    created_at: hook.createdAt,
    url,
    test_url: `${url}/test`,
    ping_url: `${url}/pings`,
    deliveries_url: `${url}/deliveries`,
    last_response: hook.lastResponse,
  };
}

function installationJson(id: number) {
  return { id, node_id: Buffer.from(`Installation:${id}`).toString('base64') };
}

function reaches(installation: InstallationSpec, repo: Repository): boolean {
  if (installation.repositories) return installation.repositories.some((r) => r.toLowerCase() === repo.fullName.toLowerCase());
  return installation.account.toLowerCase() === repo.owner.login.toLowerCase();
}

function subscribed(hook: Hook, event: string): boolean {
  if (hook.target === 'repository' && APP_ONLY_EVENTS.has(event)) return false;
  return hook.events === undefined || hook.events.includes(event) || hook.events.includes('*');
}

/** An http(s) URL without credentials in a log line. */
function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

function checkUrl(raw: string): string | undefined {
  try {
    const url = new URL(raw);
    return url.protocol === 'http:' || url.protocol === 'https:' ? raw : undefined;
  } catch {
    return undefined;
  }
}

function objectBody(ctx: RequestContext): Record<string, unknown> {
  if (typeof ctx.body !== 'object' || ctx.body === null || Array.isArray(ctx.body)) throw new ApiFailure(400, 'Problems parsing JSON');
  return ctx.body as Record<string, unknown>;
}

function invalid(field: string, doc: string): never {
  throw validationFailed([{ resource: 'Hook', field, code: 'invalid' }], doc);
}

/**
 * A hook configuration (`url`, `content_type` json|form, `secret`, `insecure_ssl` "0"|"1"): `whole` (a hook's config,
 * the url required), `keys` (the keys given; a url cannot be emptied), `keys-or-no-url` (an app's: an empty url is none).
 */
function checkConfig(
  input: Record<string, unknown>,
  doc: string,
  mode: 'whole' | 'keys' | 'keys-or-no-url',
): { url?: string; contentType?: 'json' | 'form'; secret?: string; insecureSsl?: boolean } {
  const out: { url?: string; contentType?: 'json' | 'form'; secret?: string; insecureSsl?: boolean } = {};
  if (input.url === undefined || input.url === null || input.url === '') {
    const given = input.url !== undefined;
    if (mode === 'whole' || (mode === 'keys' && given))
      throw validationFailed([{ resource: 'Hook', field: 'url', code: 'custom', message: 'Config must contain url for webhooks' }], doc);
    if (given) out.url = '';
  } else {
    const url = typeof input.url === 'string' ? checkUrl(input.url) : undefined;
    if (!url) throw validationFailed([{ resource: 'Hook', field: 'url', code: 'custom', message: 'url is not a valid http(s) URL' }], doc);
    out.url = url;
  }
  if (input.content_type !== undefined) {
    if (input.content_type !== 'json' && input.content_type !== 'form')
      throw validationFailed([{ resource: 'Hook', field: 'content_type', code: 'custom', message: 'content_type must be "json" or "form"' }], doc);
    out.contentType = input.content_type;
  }
  if (input.secret !== undefined && input.secret !== null) {
    if (typeof input.secret !== 'string') invalid('secret', doc);
    out.secret = input.secret;
  }
  if (input.insecure_ssl !== undefined) {
    const value = String(input.insecure_ssl);
    if (value !== '0' && value !== '1')
      throw validationFailed([{ resource: 'Hook', field: 'insecure_ssl', code: 'custom', message: 'insecure_ssl must be "0" or "1"' }], doc);
    out.insecureSsl = value === '1';
  }
  return out;
}

function checkEvents(input: unknown, doc: string, field = 'events'): string[] {
  if (!Array.isArray(input) || input.some((e) => typeof e !== 'string' || !/^(\*|[a-z][a-z0-9_]*)$/.test(e))) {
    throw validationFailed([{ resource: 'Hook', field, code: 'invalid' }], doc);
  }
  return input as string[];
}
