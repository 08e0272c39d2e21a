// The platform's REST resources the embedded API serves — repositories, commit statuses, deployments and their
// statuses, issues and comments, search — as GitHub's REST API shapes them, in memory. Routing and limits are the
// server's (server.ts); here are the routes' templates, what each costs, and the handlers.
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { HttpFailure, RouteTable, type Reply, type RouteEntry } from '../kit/index.js';
import type { Identity } from './identity.js';
import type { Resource } from './limits.js';

export const DOCS = 'https://docs.platform.example/rest';

/** A time as the REST API writes it: ISO 8601 in UTC to the second, `YYYY-MM-DDTHH:MM:SSZ` (no fraction). */
export function apiTime(ms: number = Date.now()): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** A failure the API answers as GitHub does: `{message, …extra, documentation_url, status}`. */
export class ApiFailure extends HttpFailure {
  constructor(
    status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly documentation = DOCS,
  ) {
    super(status, message);
  }
}

export interface ValidationError {
  resource: string;
  field: string;
  code: 'missing' | 'missing_field' | 'invalid' | 'already_exists' | 'unprocessable' | 'custom';
  message?: string;
}

/** 422 "Validation Failed" with GitHub's errors[]. */
export function validationFailed(errors: ValidationError[], documentation = DOCS): ApiFailure {
  return new ApiFailure(422, 'Validation Failed', { errors }, documentation);
}

export interface RepositorySpec {
  owner: string;
  name: string;
  private?: boolean;
  defaultBranch?: string;
  /** Extra branches, name → sha (40 hex); the default branch gets a sha of its own when absent. */
  branches?: Record<string, string>;
}

export interface User {
  login: string;
  id: number;
  type: 'User' | 'Bot' | 'Organization';
}

export interface Repository {
  id: number;
  owner: User;
  name: string;
  fullName: string;
  private: boolean;
  defaultBranch: string;
  branches: Map<string, string>;
  statuses: Map<string, StatusRecord[]>; // by sha, oldest first
  deployments: DeploymentRecord[];
  issues: IssueRecord[];
  createdAt: string;
}

export interface StatusRecord {
  id: number;
  state: string;
  description: string | null;
  target_url: string | null;
  context: string;
  created_at: string;
  creator: User;
}

export interface DeploymentRecord {
  id: number;
  sha: string;
  ref: string;
  task: string;
  payload: unknown;
  environment: string;
  description: string | null;
  transient_environment: boolean;
  production_environment: boolean;
  creator: User;
  created_at: string;
  statuses: {
    id: number;
    state: string;
    description: string;
    environment: string;
    target_url: string;
    log_url: string;
    environment_url: string;
    created_at: string;
    creator: User;
  }[];
}

interface IssueRecord {
  id: number;
  number: number;
  title: string;
  body: string | null;
  user: User;
  created_at: string;
  comments: { id: number; body: string; user: User; created_at: string }[];
}

export const STATUS_STATES = ['error', 'failure', 'pending', 'success'] as const;
const DEPLOYMENT_STATES = ['error', 'failure', 'inactive', 'in_progress', 'queued', 'pending', 'success'] as const;
/** The most statuses one sha and context may have (GitHub's). */
const MAX_STATUSES_PER_CONTEXT = 1000;

function fakeSha(seed: string): string {
  return createHash('sha1').update(seed).digest('hex');
}

function userId(login: string): number {
  return createHash('sha1').update(login).digest().readUInt32BE(0) % 10_000_000;
}

function userOf(login: string, type: User['type'] = 'User'): User {
  return { login, id: userId(login), type };
}

/** What a request is when routed: its endpoint (method + path template), cost, resource and handler. */
export interface RouteMatch {
  endpoint: string;
  resource: Resource;
  /** Not counted against the primary budget (GET /rate_limit, RATE-EP-STATUS). */
  uncounted?: boolean;
  /** Content creation (RATE-SEC-CONTENT-CREATION). */
  creation?: boolean;
  /** Only an app's JWT may call it. */
  app?: boolean;
  params: Record<string, string>;
  handler: Handler;
}

export interface RequestContext {
  identity: Identity;
  params: Record<string, string>;
  query: URLSearchParams;
  body: unknown;
  /** Origin for URLs in bodies and Link headers. */
  origin: string;
  pathname: string;
}

export type { Reply } from '../kit/index.js';

export type Handler = (ctx: RequestContext) => Reply | Promise<Reply>;

/** What happened to the state, for webhook deliveries (webhooks.ts): a commit status, a deployment, a deployment status. */
export type StateEvent = { repo: Repository; sender: User; origin: string } & (
  | { name: 'status'; sha: string; status: StatusRecord }
  | { name: 'deployment'; deployment: DeploymentRecord }
  | { name: 'deployment_status'; deployment: DeploymentRecord; status: DeploymentRecord['statuses'][number] }
);

export interface RouteDef {
  method: string;
  template: string;
  resource?: Resource;
  creation?: boolean;
  uncounted?: boolean;
  app?: boolean;
  handler: Handler;
}

/** A request to the admin API under /_gantry/: never limited, never faulted. */
export interface AdminCall {
  req: IncomingMessage;
  method: string;
  pathname: string;
  params: Record<string, string>;
}

/** An admin endpoint; server.ts has the table, webhooks.ts and protection.ts add theirs. */
export interface AdminRoute extends RouteEntry {
  handler: (call: AdminCall) => Reply | Promise<Reply>;
}

/** The admin API's answer to a path or method it does not have (404, or 405 on a path it has). */
export function noAdminEndpoint(call: AdminCall, status = 404): Reply {
  return { status, body: { message: `no admin endpoint ${call.method} ${call.pathname}` } };
}

/** The admin API's 405 for the methods of `template` that the routes listed before it do not serve. */
export function otherAdminMethods(template: string): AdminRoute {
  return { method: '*', template, handler: (call) => noAdminEndpoint(call, 405) };
}

/**
 * A part of the API beside the state's own routes (webhooks.ts, protection.ts): its routes, its admin routes, and what
 * it does on the state's events (commit statuses, deployments, deployment statuses) once attached.
 */
export abstract class StateExtension {
  protected state!: PlatformState;

  attach(state: PlatformState): void {
    this.state = state;
    state.onEvent((event) => this.onStateEvent(event));
  }

  abstract routes(): RouteDef[];
  abstract adminRoutes(): AdminRoute[];
  protected abstract onStateEvent(event: StateEvent): void;
}

export class PlatformState {
  private repos = new Map<string, Repository>();
  private nextId = 1;
  private readonly routes: RouteTable<RouteDef>;
  private listeners: ((event: StateEvent) => void)[] = [];

  constructor(
    repositories: RepositorySpec[],
    private readonly extraRoutes: RouteDef[] = [],
  ) {
    for (const spec of repositories) this.addRepository(spec);
    // A trailing slash is tolerated and literal segments are compared decoded, as the platform's router does.
    this.routes = new RouteTable([...this.defineRoutes(), ...extraRoutes], { ignoreTrailingSlash: true, decodeLiterals: true });
  }

  addRepository(spec: RepositorySpec): void {
    const fullName = `${spec.owner}/${spec.name}`;
    if (!/^[A-Za-z0-9-]+$/.test(spec.owner) || !/^[A-Za-z0-9._-]+$/.test(spec.name)) throw new Error(`not a repository name: ${fullName}`);
    const defaultBranch = spec.defaultBranch ?? 'main';
    const branches = new Map(Object.entries(spec.branches ?? {}).map(([k, v]) => [k, v.toLowerCase()]));
    if (!branches.has(defaultBranch)) branches.set(defaultBranch, fakeSha(`${fullName}@${defaultBranch}`));
    this.repos.set(fullName.toLowerCase(), {
      id: this.nextId++,
      owner: userOf(spec.owner, 'Organization'),
      name: spec.name,
      fullName,
      private: spec.private ?? false,
      defaultBranch,
      branches,
      statuses: new Map(),
      deployments: [],
      issues: [],
      createdAt: apiTime(),
    });
  }

  /** Calls `listener` after every commit status, deployment and deployment status is created. */
  onEvent(listener: (event: StateEvent) => void): void {
    this.listeners.push(listener);
  }

  /** A deployment status the server itself adds (a protection rule's outcome), as POST …/statuses would. */
  addDeploymentStatus(
    repo: Repository,
    deployment: DeploymentRecord,
    state: string,
    description: string,
    creator: User,
    origin: string,
  ): DeploymentRecord['statuses'][number] {
    const status = {
      id: this.nextId++,
      state,
      description,
      environment: deployment.environment,
      target_url: '',
      log_url: '',
      environment_url: '',
      created_at: apiTime(),
      creator,
    };
    if (state === 'success') this.markEarlierInactive(repo, deployment, status);
    deployment.statuses.push(status);
    this.emit({ name: 'deployment_status', repo, sender: creator, origin, deployment, status });
    return status;
  }

  private emit(event: StateEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  private markEarlierInactive(repo: Repository, deployment: DeploymentRecord, status: DeploymentRecord['statuses'][number]): void {
    for (const other of repo.deployments) {
      if (other !== deployment && other.environment === deployment.environment && other.statuses.at(-1)?.state !== 'inactive') {
        other.statuses.push({ ...status, id: this.nextId++, state: 'inactive', description: '' });
      }
    }
  }

  repositoryNames(): string[] {
    return [...this.repos.values()].map((r) => r.fullName);
  }

  repositoriesOf(owner: string): string[] {
    return [...this.repos.values()].filter((r) => r.owner.login.toLowerCase() === owner.toLowerCase()).map((r) => r.fullName);
  }

  /** Finds the route of a request; undefined when no endpoint matches (a 404). */
  route(method: string, pathname: string): RouteMatch | undefined {
    const found = this.routes.match(method, pathname);
    if (!('route' in found)) return undefined;
    const def = found.route;
    return {
      endpoint: `${method} ${def.template}`,
      resource: def.resource ?? 'core',
      ...(def.uncounted ? { uncounted: true } : {}),
      ...(def.creation ? { creation: true } : {}),
      ...(def.app ? { app: true } : {}),
      params: found.params,
      handler: def.handler,
    };
  }

  /** The methods allowed on a path, for a 404 versus 405 decision. */
  methodsAt(pathname: string): string[] {
    return ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'].filter((m) => this.route(m, pathname) !== undefined);
  }

  // ---- helpers ----

  repo(ctx: RequestContext, write: boolean): Repository {
    const fullName = `${ctx.params.owner}/${ctx.params.repo}`;
    const repo = this.repos.get(fullName.toLowerCase());
    const reach = ctx.identity.repositories;
    const reachable = repo !== undefined && (reach === undefined || reach(repo.fullName, repo.owner.login));
    if (!repo || (repo.private && (ctx.identity.kind === 'unauthenticated' || ctx.identity.kind === 'oauth-app' || !reachable))) {
      throw new ApiFailure(404, 'Not Found', {}, `${DOCS}/repos/repos#get-a-repository`);
    }
    if (write) {
      if (ctx.identity.kind === 'unauthenticated' || ctx.identity.kind === 'oauth-app') throw new ApiFailure(401, 'Requires authentication');
      if (!reachable) throw new ApiFailure(403, 'Resource not accessible by integration');
    } else if (!reachable && ctx.identity.kind === 'installation') {
      throw new ApiFailure(404, 'Not Found', {}, `${DOCS}/repos/repos#get-a-repository`);
    }
    return repo;
  }

  /** A ref to a sha: a branch name, or 40 hex digits (any commit exists in the dev server). */
  private resolveRef(repo: Repository, ref: string): string | undefined {
    const branch = repo.branches.get(ref.replace(/^refs\/heads\//, ''));
    if (branch) return branch;
    return /^[0-9a-f]{40}$/i.test(ref) ? ref.toLowerCase() : undefined;
  }

  creator(identity: Identity): User {
    if (identity.kind === 'workflow') return userOf('platform-actions[bot]', 'Bot');
    if (identity.kind === 'installation' || identity.kind === 'app') return userOf(`app-${identity.appId ?? 0}[bot]`, 'Bot');
    return userOf(identity.token?.login ?? 'dev', 'User');
  }

  repoJson(repo: Repository, origin: string) {
    const api = `${origin}/repos/${repo.fullName}`;
    return {
      id: repo.id,
      node_id: Buffer.from(`Repository:${repo.id}`).toString('base64'),
      name: repo.name,
      full_name: repo.fullName,
      private: repo.private,
      visibility: repo.private ? 'private' : 'public',
      owner: { ...repo.owner, url: `${origin}/users/${repo.owner.login}` },
      html_url: `${origin}/${repo.fullName}`,
      url: api,
      statuses_url: `${api}/statuses/{sha}`,
      deployments_url: `${api}/deployments`,
      issues_url: `${api}/issues{/number}`,
      default_branch: repo.defaultBranch,
      created_at: repo.createdAt,
    };
  }

  userJson(user: User, origin: string) {
    const api = `${origin}/users/${user.login}`;
    return {
      login: user.login,
      id: user.id,
      node_id: Buffer.from(`User:${user.id}`).toString('base64'),
      avatar_url: '',
      url: api,
      html_url: `${origin}/${user.login}`,
      repos_url: `${api}/repos`,
      type: user.type,
      site_admin: false,
      name: user.login,
      created_at: apiTime(Date.UTC(2024, 0, 1)),
      updated_at: apiTime(Date.UTC(2024, 0, 1)),
    };
  }

  /** A commit the dev server makes up for a sha: no tree or parents to speak of, the repository's creation as its time. */
  commitJson(repo: Repository, sha: string, origin: string) {
    const api = `${origin}/repos/${repo.fullName}`;
    const person = { name: 'Gantry Dev', email: 'dev@gantry.test', date: repo.createdAt };
    return {
      sha,
      node_id: Buffer.from(`Commit:${repo.id}:${sha}`).toString('base64'),
      commit: {
        author: person,
        committer: person,
        message: `Commit ${sha.slice(0, 7)}`,
        tree: { sha: fakeSha(`tree:${sha}`), url: `${api}/git/trees/${fakeSha(`tree:${sha}`)}` },
        url: `${api}/git/commits/${sha}`,
        comment_count: 0,
      },
      url: `${api}/commits/${sha}`,
      html_url: `${origin}/${repo.fullName}/commit/${sha}`,
      comments_url: `${api}/commits/${sha}/comments`,
      author: null,
      committer: null,
      parents: [],
    };
  }

  statusJson(repo: Repository, sha: string, s: StatusRecord, origin: string) {
    return {
      url: `${origin}/repos/${repo.fullName}/statuses/${sha}`,
      avatar_url: null,
      id: s.id,
      node_id: Buffer.from(`StatusContext:${s.id}`).toString('base64'),
      state: s.state,
      description: s.description,
      target_url: s.target_url,
      context: s.context,
      created_at: s.created_at,
      updated_at: s.created_at,
      creator: s.creator,
    };
  }

  deploymentJson(repo: Repository, d: DeploymentRecord, origin: string) {
    const url = `${origin}/repos/${repo.fullName}/deployments/${d.id}`;
    return {
      url,
      id: d.id,
      node_id: Buffer.from(`Deployment:${d.id}`).toString('base64'),
      sha: d.sha,
      ref: d.ref,
      task: d.task,
      payload: d.payload,
      original_environment: d.environment,
      environment: d.environment,
      description: d.description,
      creator: d.creator,
      created_at: d.created_at,
      updated_at: d.statuses.at(-1)?.created_at ?? d.created_at,
      statuses_url: `${url}/statuses`,
      repository_url: `${origin}/repos/${repo.fullName}`,
      transient_environment: d.transient_environment,
      production_environment: d.production_environment,
    };
  }

  private issueJson(repo: Repository, i: IssueRecord, origin: string) {
    const url = `${origin}/repos/${repo.fullName}/issues/${i.number}`;
    return {
      id: i.id,
      node_id: Buffer.from(`Issue:${i.id}`).toString('base64'),
      url,
      repository_url: `${origin}/repos/${repo.fullName}`,
      comments_url: `${url}/comments`,
      html_url: `${origin}/${repo.fullName}/issues/${i.number}`,
      number: i.number,
      state: 'open',
      title: i.title,
      body: i.body,
      user: i.user,
      labels: [],
      comments: i.comments.length,
      created_at: i.created_at,
      updated_at: i.comments.at(-1)?.created_at ?? i.created_at,
    };
  }

  private commentJson(repo: Repository, issue: IssueRecord, c: IssueRecord['comments'][number], origin: string) {
    return {
      id: c.id,
      node_id: Buffer.from(`IssueComment:${c.id}`).toString('base64'),
      url: `${origin}/repos/${repo.fullName}/issues/comments/${c.id}`,
      issue_url: `${origin}/repos/${repo.fullName}/issues/${issue.number}`,
      body: c.body,
      user: c.user,
      created_at: c.created_at,
      updated_at: c.created_at,
    };
  }

  // ---- routes ----

  private defineRoutes(): RouteDef[] {
    const body = (ctx: RequestContext): Record<string, unknown> => {
      if (typeof ctx.body !== 'object' || ctx.body === null || Array.isArray(ctx.body)) throw new ApiFailure(400, 'Problems parsing JSON');
      return ctx.body as Record<string, unknown>;
    };
    const now = () => apiTime();
    const ok = (json: unknown): Reply => ({ status: 200, body: json });
    // A GET of something in a repository the caller can read (404 where it cannot).
    const readRepo = (template: string, answer: (ctx: RequestContext, repo: Repository) => Reply): RouteDef => ({
      method: 'GET',
      template,
      handler: (ctx) => answer(ctx, this.repo(ctx, false)),
    });
    // A write that creates something in a repository (counted against the creation limits).
    const createInRepo = (method: string, template: string, answer: (ctx: RequestContext, repo: Repository) => Reply): RouteDef => ({
      method,
      template,
      creation: true,
      handler: (ctx) => answer(ctx, this.repo(ctx, true)),
    });
    const commitStatuses = (ctx: RequestContext): Reply => {
      const repo = this.repo(ctx, false);
      const sha = this.resolveRef(repo, ctx.params.ref!);
      if (!sha) throw new ApiFailure(422, `No commit found for SHA: ${ctx.params.ref}`);
      const all = [...(repo.statuses.get(sha) ?? [])].reverse(); // newest first
      return pageReply(all, ctx, (s) => this.statusJson(repo, sha, s, ctx.origin));
    };
    return [
      // What clients ask first: who am I, the organization, the repository, a branch, a commit.
      {
        method: 'GET',
        template: '/user',
        handler: (ctx) => {
          const { kind } = ctx.identity;
          if (kind === 'unauthenticated' || kind === 'oauth-app')
            throw new ApiFailure(401, 'Requires authentication', {}, `${DOCS}/users/users#get-the-authenticated-user`);
          if (kind !== 'user') throw new ApiFailure(403, 'Resource not accessible by integration', {}, `${DOCS}/users/users#get-the-authenticated-user`);
          return { status: 200, body: this.userJson(userOf(ctx.identity.token?.login ?? 'dev'), ctx.origin) };
        },
      },
      {
        method: 'GET',
        template: '/orgs/{org}',
        handler: (ctx) => {
          const owned = [...this.repos.values()].filter((r) => r.owner.login.toLowerCase() === ctx.params.org!.toLowerCase());
          if (owned.length === 0) throw new ApiFailure(404, 'Not Found', {}, `${DOCS}/orgs/orgs#get-an-organization`);
          const org = owned[0]!.owner;
          const api = `${ctx.origin}/orgs/${org.login}`;
          return {
            status: 200,
            body: {
              login: org.login,
              id: org.id,
              node_id: Buffer.from(`Organization:${org.id}`).toString('base64'),
              url: api,
              repos_url: `${api}/repos`,
              hooks_url: `${api}/hooks`,
              issues_url: `${api}/issues`,
              members_url: `${api}/members{/member}`,
              public_members_url: `${api}/public_members{/member}`,
              avatar_url: '',
              description: null,
              html_url: `${ctx.origin}/${org.login}`,
              public_repos: owned.filter((r) => !r.private).length,
              type: 'Organization',
              created_at: owned.map((r) => r.createdAt).sort()[0],
              updated_at: owned
                .map((r) => r.createdAt)
                .sort()
                .at(-1),
            },
          };
        },
      },
      {
        method: 'GET',
        template: '/repos/{owner}/{repo}',
        handler: (ctx) => ({ status: 200, body: this.repoJson(this.repo(ctx, false), ctx.origin) }),
      },
      readRepo('/repos/{owner}/{repo}/branches/{branch}', (ctx, repo) => {
        const name = ctx.params.branch!;
        const sha = repo.branches.get(name);
        if (!sha) throw new ApiFailure(404, 'Branch not found', {}, `${DOCS}/branches/branches#get-a-branch`);
        const api = `${ctx.origin}/repos/${repo.fullName}`;
        return {
          status: 200,
          body: {
            name,
            commit: this.commitJson(repo, sha, ctx.origin),
            _links: { self: `${api}/branches/${encodeURIComponent(name)}`, html: `${ctx.origin}/${repo.fullName}/tree/${name}` },
            protected: false,
            protection: { enabled: false, required_status_checks: { enforcement_level: 'off', contexts: [], checks: [] } },
            protection_url: `${api}/branches/${encodeURIComponent(name)}/protection`,
          },
        };
      }),
      readRepo('/repos/{owner}/{repo}/commits/{ref}', (ctx, repo) => {
        const sha = this.resolveRef(repo, ctx.params.ref!);
        if (!sha) throw new ApiFailure(422, `No commit found for SHA: ${ctx.params.ref}`, {}, `${DOCS}/commits/commits#get-a-commit`);
        return { status: 200, body: { ...this.commitJson(repo, sha, ctx.origin), stats: { total: 0, additions: 0, deletions: 0 }, files: [] } };
      }),
      { method: 'GET', template: '/orgs/{org}/repos', handler: (ctx) => this.listRepos(ctx, ctx.params.org!) },
      { method: 'GET', template: '/users/{username}/repos', handler: (ctx) => this.listRepos(ctx, ctx.params.username!) },
      {
        method: 'GET',
        template: '/installation/repositories',
        handler: (ctx) => {
          if (ctx.identity.kind !== 'installation')
            throw new ApiFailure(403, 'You must authenticate with an installation access token in order to list repositories for an installation.');
          const visible = [...this.repos.values()].filter((r) => ctx.identity.repositories!(r.fullName, r.owner.login));
          const page = paginate(visible, ctx);
          return {
            status: 200,
            headers: page.headers,
            body: { total_count: visible.length, repository_selection: 'selected', repositories: page.items.map((r) => this.repoJson(r, ctx.origin)) },
          };
        },
      },
      // Commit statuses
      createInRepo('POST', '/repos/{owner}/{repo}/statuses/{sha}', (ctx, repo) => {
        const input = body(ctx);
        const doc = `${DOCS}/commits/statuses#create-a-commit-status`;
        const errors: ValidationError[] = [];
        if (input.state === undefined) errors.push({ resource: 'Status', field: 'state', code: 'missing_field' });
        else if (typeof input.state !== 'string' || !(STATUS_STATES as readonly string[]).includes(input.state)) {
          errors.push({ resource: 'Status', field: 'state', code: 'custom', message: 'state is not included in the list' });
        }
        if (input.description !== undefined && input.description !== null) {
          if (typeof input.description !== 'string') errors.push({ resource: 'Status', field: 'description', code: 'invalid' });
          else if ([...input.description].length > 140)
            errors.push({ resource: 'Status', field: 'description', code: 'custom', message: 'description is too long (maximum is 140 characters)' });
        }
        if (input.target_url !== undefined && input.target_url !== null) {
          if (typeof input.target_url !== 'string' || !/^https?:\/\/[^\s]+$/i.test(input.target_url))
            errors.push({ resource: 'Status', field: 'target_url', code: 'custom', message: 'target_url must use http(s) scheme' });
        }
        if (input.context !== undefined && input.context !== null && (typeof input.context !== 'string' || input.context.trim() === '')) {
          errors.push({ resource: 'Status', field: 'context', code: 'invalid' });
        }
        if (errors.length > 0) throw validationFailed(errors, doc);
        const sha = this.resolveRef(repo, ctx.params.sha!);
        if (!sha) throw new ApiFailure(422, `No commit found for SHA: ${ctx.params.sha}`, {}, doc);
        const list = repo.statuses.get(sha) ?? [];
        const context = (input.context as string | undefined) ?? 'default';
        if (list.filter((s) => s.context === context).length >= MAX_STATUSES_PER_CONTEXT) {
          throw validationFailed(
            [{ resource: 'Status', field: 'context', code: 'custom', message: 'This SHA and context has reached the maximum number of statuses.' }],
            doc,
          );
        }
        const record: StatusRecord = {
          id: this.nextId++,
          state: input.state as string,
          description: (input.description as string | null | undefined) ?? null,
          target_url: (input.target_url as string | null | undefined) ?? null,
          context,
          created_at: now(),
          creator: this.creator(ctx.identity),
        };
        list.push(record);
        repo.statuses.set(sha, list);
        this.emit({ name: 'status', repo, sender: record.creator, origin: ctx.origin, sha, status: record });
        return { status: 201, body: this.statusJson(repo, sha, record, ctx.origin) };
      }),
      { method: 'GET', template: '/repos/{owner}/{repo}/commits/{ref}/statuses', handler: commitStatuses },
      // The older path of the same list, which clients still call.
      { method: 'GET', template: '/repos/{owner}/{repo}/statuses/{ref}', handler: commitStatuses },
      readRepo('/repos/{owner}/{repo}/commits/{ref}/status', (ctx, repo) => {
        const sha = this.resolveRef(repo, ctx.params.ref!);
        if (!sha) throw new ApiFailure(422, `No commit found for SHA: ${ctx.params.ref}`);
        const latest = new Map<string, StatusRecord>();
        for (const s of repo.statuses.get(sha) ?? []) latest.set(s.context, s);
        const statuses = [...latest.values()];
        const state = combinedState(statuses.map((s) => s.state));
        const page = paginate(statuses, ctx);
        return {
          status: 200,
          headers: page.headers,
          body: {
            state,
            statuses: page.items.map((s) => this.statusJson(repo, sha, s, ctx.origin)),
            sha,
            total_count: statuses.length,
            repository: this.repoJson(repo, ctx.origin),
            commit_url: `${ctx.origin}/repos/${repo.fullName}/commits/${sha}`,
            url: `${ctx.origin}/repos/${repo.fullName}/commits/${sha}/status`,
          },
        };
      }),
      // Deployments
      createInRepo('POST', '/repos/{owner}/{repo}/deployments', (ctx, repo) => {
        const input = body(ctx);
        const doc = `${DOCS}/deployments/deployments#create-a-deployment`;
        if (typeof input.ref !== 'string' || input.ref === '')
          throw validationFailed([{ resource: 'Deployment', field: 'ref', code: input.ref === undefined ? 'missing_field' : 'invalid' }], doc);
        const sha = this.resolveRef(repo, input.ref);
        if (!sha) throw new ApiFailure(422, `No ref found for: ${input.ref}`, {}, doc);
        for (const field of ['task', 'environment', 'description'] as const) {
          if (input[field] !== undefined && input[field] !== null && typeof input[field] !== 'string')
            throw validationFailed([{ resource: 'Deployment', field, code: 'invalid' }], doc);
        }
        if (input.required_contexts !== undefined && (!Array.isArray(input.required_contexts) || input.required_contexts.some((c) => typeof c !== 'string'))) {
          throw validationFailed([{ resource: 'Deployment', field: 'required_contexts', code: 'invalid' }], doc);
        }
        // Required contexts: by default every context with a status on the ref must be success (GitHub's rule).
        const latest = new Map<string, string>();
        for (const s of repo.statuses.get(sha) ?? []) latest.set(s.context, s.state);
        const required = (input.required_contexts as string[] | undefined) ?? [...latest.keys()];
        const failing = required.filter((c) => latest.get(c) !== 'success');
        if (failing.length > 0) {
          throw new ApiFailure(
            409,
            `Conflict: Commit status checks failed for ${input.ref}.`,
            {
              errors: [
                {
                  contexts: failing.map((context) => ({ context, state: latest.get(context) ?? 'missing' })),
                  resource: 'Deployment',
                  field: 'required_contexts',
                  code: 'invalid',
                },
              ],
            },
            doc,
          );
        }
        const record: DeploymentRecord = {
          id: this.nextId++,
          sha,
          ref: input.ref,
          task: (input.task as string | undefined) ?? 'deploy',
          payload: input.payload ?? {},
          environment: (input.environment as string | undefined) ?? 'production',
          description: (input.description as string | undefined) ?? null,
          transient_environment: input.transient_environment === true,
          production_environment:
            input.production_environment === undefined
              ? ((input.environment as string | undefined) ?? 'production') === 'production'
              : input.production_environment === true,
          creator: this.creator(ctx.identity),
          created_at: now(),
          statuses: [],
        };
        repo.deployments.push(record);
        this.emit({ name: 'deployment', repo, sender: record.creator, origin: ctx.origin, deployment: record });
        return { status: 201, body: this.deploymentJson(repo, record, ctx.origin) };
      }),
      readRepo('/repos/{owner}/{repo}/deployments', (ctx, repo) => {
        let list = [...repo.deployments].reverse();
        for (const key of ['sha', 'ref', 'task', 'environment'] as const) {
          const wanted = ctx.query.get(key);
          if (wanted !== null) list = list.filter((d) => d[key] === wanted);
        }
        return pageReply(list, ctx, (d) => this.deploymentJson(repo, d, ctx.origin));
      }),
      readRepo('/repos/{owner}/{repo}/deployments/{id}', (ctx, repo) => ok(this.deploymentJson(repo, this.deployment(repo, ctx.params.id!), ctx.origin))),
      createInRepo('POST', '/repos/{owner}/{repo}/deployments/{id}/statuses', (ctx, repo) => {
        const deployment = this.deployment(repo, ctx.params.id!);
        const input = body(ctx);
        const doc = `${DOCS}/deployments/statuses#create-a-deployment-status`;
        if (typeof input.state !== 'string' || !(DEPLOYMENT_STATES as readonly string[]).includes(input.state)) {
          throw validationFailed(
            [
              input.state === undefined
                ? { resource: 'DeploymentStatus', field: 'state', code: 'missing_field' }
                : { resource: 'DeploymentStatus', field: 'state', code: 'custom', message: 'state is not included in the list' },
            ],
            doc,
          );
        }
        const text = (field: string) => {
          const value = input[field];
          if (value !== undefined && value !== null && typeof value !== 'string')
            throw validationFailed([{ resource: 'DeploymentStatus', field, code: 'invalid' }], doc);
          return (value as string | undefined) ?? '';
        };
        const description = text('description');
        if ([...description].length > 140)
          throw validationFailed(
            [{ resource: 'DeploymentStatus', field: 'description', code: 'custom', message: 'description is too long (maximum is 140 characters)' }],
            doc,
          );
        const status = {
          id: this.nextId++,
          state: input.state,
          description,
          environment: text('environment') || deployment.environment,
          target_url: text('target_url') || text('log_url'),
          log_url: text('log_url') || text('target_url'),
          environment_url: text('environment_url'),
          created_at: now(),
          creator: this.creator(ctx.identity),
        };
        // auto_inactive (default true): a success marks earlier deployments of the environment inactive.
        if (status.state === 'success' && input.auto_inactive !== false) this.markEarlierInactive(repo, deployment, status);
        deployment.statuses.push(status);
        this.emit({ name: 'deployment_status', repo, sender: status.creator, origin: ctx.origin, deployment, status });
        return { status: 201, body: this.deploymentStatusJson(repo, deployment, status, ctx.origin) };
      }),
      readRepo('/repos/{owner}/{repo}/deployments/{id}/statuses', (ctx, repo) => {
        const deployment = this.deployment(repo, ctx.params.id!);
        return pageReply([...deployment.statuses].reverse(), ctx, (s) => this.deploymentStatusJson(repo, deployment, s, ctx.origin));
      }),
      readRepo('/repos/{owner}/{repo}/deployments/{id}/statuses/{status_id}', (ctx, repo) => {
        const deployment = this.deployment(repo, ctx.params.id!);
        const status = deployment.statuses.find((s) => String(s.id) === ctx.params.status_id);
        if (!status) throw new ApiFailure(404, 'Not Found');
        return { status: 200, body: this.deploymentStatusJson(repo, deployment, status, ctx.origin) };
      }),
      // Issues and comments
      createInRepo('POST', '/repos/{owner}/{repo}/issues', (ctx, repo) => {
        const input = body(ctx);
        const doc = `${DOCS}/issues/issues#create-an-issue`;
        if (typeof input.title !== 'string' && typeof input.title !== 'number')
          throw validationFailed([{ resource: 'Issue', field: 'title', code: input.title === undefined ? 'missing_field' : 'invalid' }], doc);
        if (input.body !== undefined && input.body !== null && typeof input.body !== 'string')
          throw validationFailed([{ resource: 'Issue', field: 'body', code: 'invalid' }], doc);
        const issue: IssueRecord = {
          id: this.nextId++,
          number: repo.issues.length + 1,
          title: String(input.title),
          body: (input.body as string | undefined) ?? null,
          user: this.creator(ctx.identity),
          created_at: now(),
          comments: [],
        };
        repo.issues.push(issue);
        return { status: 201, body: this.issueJson(repo, issue, ctx.origin) };
      }),
      readRepo('/repos/{owner}/{repo}/issues', (ctx, repo) => pageReply([...repo.issues].reverse(), ctx, (i) => this.issueJson(repo, i, ctx.origin))),
      readRepo('/repos/{owner}/{repo}/issues/{number}', (ctx, repo) => ok(this.issueJson(repo, this.issue(repo, ctx.params.number!), ctx.origin))),
      createInRepo('POST', '/repos/{owner}/{repo}/issues/{number}/comments', (ctx, repo) => {
        const issue = this.issue(repo, ctx.params.number!);
        const input = body(ctx);
        if (typeof input.body !== 'string' || input.body === '') {
          throw validationFailed(
            [{ resource: 'IssueComment', field: 'body', code: input.body === undefined ? 'missing_field' : 'invalid' }],
            `${DOCS}/issues/comments#create-an-issue-comment`,
          );
        }
        const comment = { id: this.nextId++, body: input.body, user: this.creator(ctx.identity), created_at: now() };
        issue.comments.push(comment);
        return { status: 201, body: this.commentJson(repo, issue, comment, ctx.origin) };
      }),
      readRepo('/repos/{owner}/{repo}/issues/{number}/comments', (ctx, repo) => {
        const issue = this.issue(repo, ctx.params.number!);
        return pageReply(issue.comments, ctx, (c) => this.commentJson(repo, issue, c, ctx.origin));
      }),
      // Search (its own resource and stricter limit, RATE-PRI-STRICTER-ENDPOINTS)
      {
        method: 'GET',
        template: '/search/repositories',
        resource: 'search',
        handler: (ctx) => {
          const { terms, qualifiers } = searchQuery(ctx);
          const found = [...this.repos.values()].filter(
            (r) =>
              this.visible(ctx.identity, r) &&
              (qualifiers.user === undefined && qualifiers.org === undefined
                ? true
                : r.owner.login.toLowerCase() === (qualifiers.user ?? qualifiers.org)!.toLowerCase()) &&
              terms.every((t) => r.fullName.toLowerCase().includes(t)),
          );
          const page = paginate(found, ctx);
          return {
            status: 200,
            headers: page.headers,
            body: { total_count: found.length, incomplete_results: false, items: page.items.map((r) => this.repoJson(r, ctx.origin)) },
          };
        },
      },
      {
        method: 'GET',
        template: '/search/issues',
        resource: 'search',
        handler: (ctx) => {
          const { terms, qualifiers } = searchQuery(ctx);
          const found: { repo: Repository; issue: IssueRecord }[] = [];
          for (const repo of this.repos.values()) {
            if (!this.visible(ctx.identity, repo)) continue;
            if (qualifiers.repo !== undefined && repo.fullName.toLowerCase() !== qualifiers.repo.toLowerCase()) continue;
            for (const issue of repo.issues) {
              const text = `${issue.title}\n${issue.body ?? ''}`.toLowerCase();
              if (terms.every((t) => text.includes(t))) found.push({ repo, issue });
            }
          }
          const page = paginate(found, ctx);
          return {
            status: 200,
            headers: page.headers,
            body: { total_count: found.length, incomplete_results: false, items: page.items.map(({ repo, issue }) => this.issueJson(repo, issue, ctx.origin)) },
          };
        },
      },
    ];
  }

  private visible(identity: Identity, repo: Repository): boolean {
    const reachable = identity.repositories === undefined || identity.repositories(repo.fullName, repo.owner.login);
    if (!repo.private) return identity.kind === 'installation' ? reachable : true;
    return identity.kind !== 'unauthenticated' && identity.kind !== 'oauth-app' && reachable;
  }

  private listRepos(ctx: RequestContext, owner: string): Reply {
    const list = [...this.repos.values()].filter((r) => r.owner.login.toLowerCase() === owner.toLowerCase() && this.visible(ctx.identity, r));
    if (list.length === 0 && ![...this.repos.values()].some((r) => r.owner.login.toLowerCase() === owner.toLowerCase())) throw new ApiFailure(404, 'Not Found');
    return pageReply(list, ctx, (r) => this.repoJson(r, ctx.origin));
  }

  deployment(repo: Repository, id: string): DeploymentRecord {
    const found = repo.deployments.find((d) => String(d.id) === id);
    if (!found) throw new ApiFailure(404, 'Not Found', {}, `${DOCS}/deployments/deployments#get-a-deployment`);
    return found;
  }

  private issue(repo: Repository, number: string): IssueRecord {
    const found = /^\d+$/.test(number) ? repo.issues[Number(number) - 1] : undefined;
    if (!found) throw new ApiFailure(404, 'Not Found', {}, `${DOCS}/issues/issues#get-an-issue`);
    return found;
  }

  deploymentStatusJson(repo: Repository, d: DeploymentRecord, s: DeploymentRecord['statuses'][number], origin: string) {
    const deploymentUrl = `${origin}/repos/${repo.fullName}/deployments/${d.id}`;
    return {
      url: `${deploymentUrl}/statuses/${s.id}`,
      id: s.id,
      node_id: Buffer.from(`DeploymentStatus:${s.id}`).toString('base64'),
      state: s.state,
      creator: s.creator,
      description: s.description,
      environment: s.environment,
      target_url: s.target_url,
      log_url: s.log_url,
      environment_url: s.environment_url,
      created_at: s.created_at,
      updated_at: s.created_at,
      deployment_url: deploymentUrl,
      repository_url: `${origin}/repos/${repo.fullName}`,
    };
  }
}

/** The combined state of the latest status per context: failure if any error or failure, pending if any pending or
 * none at all, success otherwise (GitHub's rule). */
export function combinedState(states: string[]): string {
  if (states.some((s) => s === 'error' || s === 'failure')) return 'failure';
  if (states.length === 0 || states.some((s) => s === 'pending')) return 'pending';
  return 'success';
}

function searchQuery(ctx: RequestContext): { terms: string[]; qualifiers: Record<string, string> } {
  const q = ctx.query.get('q');
  if (q === null || q.trim() === '') throw validationFailed([{ resource: 'Search', field: 'q', code: 'missing' }], `${DOCS}/search/search`);
  const terms: string[] = [];
  const qualifiers: Record<string, string> = {};
  for (const word of q.trim().split(/\s+/)) {
    const m = /^([a-z]+):(.+)$/i.exec(word);
    if (m) qualifiers[m[1]!.toLowerCase()] = m[2]!;
    else terms.push(word.toLowerCase());
  }
  return { terms, qualifiers };
}

/** `per_page` (default 30, at most 100) and `page` (from 1), with a Link header naming next, last, first and prev. */
/** A 200 with one page of a list, each item in its JSON, and the Link header to the others. */
export function pageReply<T>(items: T[], ctx: RequestContext, json: (item: T) => unknown): Reply {
  const page = paginate(items, ctx);
  return { status: 200, headers: page.headers, body: page.items.map(json) };
}

export function paginate<T>(items: T[], ctx: RequestContext): { items: T[]; headers: Record<string, string> } {
  const number = (name: string, fallback: number) => {
    const raw = ctx.query.get(name);
    if (raw === null || raw === '') return fallback;
    const n = Number(raw);
    return Number.isInteger(n) && n > 0 ? n : fallback;
  };
  const perPage = Math.min(100, number('per_page', 30));
  const page = number('page', 1);
  const last = Math.max(1, Math.ceil(items.length / perPage));
  const link = (p: number) => {
    const query = new URLSearchParams(ctx.query);
    query.set('per_page', String(perPage));
    query.set('page', String(p));
    return `<${ctx.origin}${ctx.pathname}?${query.toString()}>`;
  };
  const rels: string[] = [];
  if (page > 1) rels.push(`${link(Math.min(page - 1, last))}; rel="prev"`);
  if (page < last) rels.push(`${link(page + 1)}; rel="next"`, `${link(last)}; rel="last"`);
  if (page > 1) rels.push(`${link(1)}; rel="first"`);
  return { items: items.slice((page - 1) * perPage, page * perPage), headers: rels.length > 0 ? { link: rels.join(', ') } : {} };
}
