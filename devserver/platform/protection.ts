// Environments and custom deployment protection rules, GitHub's REST API renamed: `PUT /repos/{owner}/{repo}/
// environments/{name}`, `…/deployment_protection_rules` naming an app (`integration_id`). A deployment created to a
// protected environment waits (a `waiting` status) and its rules' apps get `deployment_protection_rule` (action
// `requested`) on their webhooks; each app answers at `deployment_callback_url` with an installation token: status
// reports (no `state`, at most 10 per deployment) and one decision — approved (every rule) → a `success` status,
// rejected (any rule) → `failure`. Comments are at most 1,024 characters, as GitHub's.
import {
  ApiFailure,
  apiTime,
  DOCS,
  noAdminEndpoint,
  otherAdminMethods,
  StateExtension,
  validationFailed,
  type AdminCall,
  type AdminRoute,
  type DeploymentRecord,
  type Reply,
  type Repository,
  type RequestContext,
  type RouteDef,
  type StateEvent,
  type ValidationError,
} from './api.js';
import type { AppSpec } from './identity.js';
import type { Webhooks } from './webhooks.js';

/** GitHub's limits on the callback: status reports per deployment, characters per comment. */
export const MAX_STATUS_REPORTS = 10;
export const MAX_COMMENT_CHARACTERS = 1024;
const ENV_DOC = `${DOCS}/deployments/environments`;
const RULES_DOC = `${DOCS}/deployments/protection-rules`;
const REVIEW_DOC = `${DOCS}/actions/workflow-runs#review-custom-deployment-protection-rules-for-a-workflow-run`;

export interface EnvironmentSpec {
  /** `owner/name`. */
  repository: string;
  name: string;
  /** Custom deployment protection rules, each an app's. */
  protectionRules?: { appId: number }[];
}

interface Environment {
  id: number;
  name: string;
  createdAt: string;
  updatedAt: string;
  rules: { id: number; appId: number }[];
}

interface Gate {
  appId: number;
  ruleId: number;
  installationId: number | null;
  state: 'waiting' | 'approved' | 'rejected';
  /** The GUID of the `deployment_protection_rule` delivery, or why none was sent. */
  delivery: { guid: string } | { reason: string };
}

interface Protected {
  runId: number;
  repo: Repository;
  deployment: DeploymentRecord;
  environment: string;
  callbackUrl: string;
  origin: string;
  state: 'waiting' | 'approved' | 'rejected';
  gates: Gate[];
  reports: { app_id: number; comment: string; at: string }[];
  decisions: { app_id: number; state: 'approved' | 'rejected'; comment: string | null; at: string }[];
}

export interface ProtectedDeploymentReport {
  repository: string;
  deployment_id: number;
  environment: string;
  run_id: number;
  deployment_callback_url: string;
  /** waiting until every rule approved (approved) or one rejected (rejected). */
  state: 'waiting' | 'approved' | 'rejected';
  rules: {
    app_id: number;
    rule_id: number;
    installation_id: number | null;
    state: Gate['state'];
    delivery_guid: string | null;
    not_delivered: string | null;
  }[];
  reports: Protected['reports'];
  /** The decision that settled it (the rejection, or the last approval), null while waiting. */
  decision: Protected['decisions'][number] | null;
  decisions: Protected['decisions'];
  statuses: { state: string; description: string; created_at: string }[];
}

export class Protection extends StateExtension {
  private nextId = 1;
  private nextRun = 9_000_001;
  private readonly environments = new Map<string, Environment[]>();
  private readonly runs = new Map<number, Protected>();
  private readonly apps: Map<number, AppSpec>;

  constructor(
    private readonly webhooks: Webhooks,
    options: { apps: AppSpec[]; environments: EnvironmentSpec[] },
  ) {
    super();
    this.apps = new Map(options.apps.map((a) => [a.id, a]));
    for (const spec of options.environments) {
      const env = this.ensure(spec.repository.toLowerCase(), spec.name);
      for (const rule of spec.protectionRules ?? []) {
        if (!this.apps.has(rule.appId)) throw new Error(`environment ${spec.repository}/${spec.name}: no app ${rule.appId}`);
        if (!env.rules.some((r) => r.appId === rule.appId)) env.rules.push({ id: this.nextId++, appId: rule.appId });
      }
    }
  }

  report(): ProtectedDeploymentReport[] {
    return [...this.runs.values()].map((p) => reportOf(p));
  }

  /** `/_gantry/protection` and `/_gantry/deployments/{id}`. */
  adminRoutes(): AdminRoute[] {
    const deployment = (call: AdminCall): Reply => {
      const id = call.params.id!;
      if (!/^\d+$/.test(id)) return noAdminEndpoint(call);
      if (call.method !== 'GET') return noAdminEndpoint(call, 405);
      const found = [...this.runs.values()].find((p) => p.deployment.id === Number(id));
      return found ? { status: 200, body: reportOf(found) } : { status: 404, body: { message: `deployment ${id} went to no protected environment` } };
    };
    return [
      { method: 'GET', template: '/_gantry/protection', handler: () => ({ status: 200, body: { deployments: this.report() } }) },
      otherAdminMethods('/_gantry/protection'),
      { method: '*', template: '/_gantry/deployments/{id}', handler: deployment },
    ];
  }

  routes(): RouteDef[] {
    const envOf = (ctx: RequestContext, repo: Repository): Environment => {
      const env = this.list(repo).find((e) => e.name.toLowerCase() === ctx.params.environment_name!.toLowerCase());
      if (!env) throw new ApiFailure(404, 'Not Found', {}, `${ENV_DOC}#get-an-environment`);
      return env;
    };
    const ruleOf = (ctx: RequestContext, env: Environment) => {
      const rule = env.rules.find((r) => String(r.id) === ctx.params.protection_rule_id);
      if (!rule) throw new ApiFailure(404, 'Not Found', {}, `${RULES_DOC}#get-a-custom-deployment-protection-rule`);
      return rule;
    };
    return [
      {
        method: 'GET',
        template: '/repos/{owner}/{repo}/environments',
        handler: (ctx) => {
          const repo = this.state.repo(ctx, false);
          const list = this.list(repo);
          return { status: 200, body: { total_count: list.length, environments: list.map((e) => this.envJson(repo, e, ctx.origin)) } };
        },
      },
      {
        method: 'GET',
        template: '/repos/{owner}/{repo}/environments/{environment_name}',
        handler: (ctx) => {
          const repo = this.state.repo(ctx, false);
          return { status: 200, body: this.envJson(repo, envOf(ctx, repo), ctx.origin) };
        },
      },
      {
        method: 'PUT',
        template: '/repos/{owner}/{repo}/environments/{environment_name}',
        handler: (ctx) => {
          const repo = this.writable(ctx);
          const name = ctx.params.environment_name!;
          if (typeof ctx.body !== 'object' || ctx.body === null || Array.isArray(ctx.body)) throw new ApiFailure(400, 'Problems parsing JSON');
          if (name.length > 255 || [...name].some((c) => c.charCodeAt(0) < 0x20))
            throw validationFailed([{ resource: 'Environment', field: 'name', code: 'invalid' }], `${ENV_DOC}#create-or-update-an-environment`);
          const env = this.ensure(repo.fullName.toLowerCase(), name);
          env.updatedAt = apiTime();
          return { status: 200, body: this.envJson(repo, env, ctx.origin) };
        },
      },
      {
        method: 'DELETE',
        template: '/repos/{owner}/{repo}/environments/{environment_name}',
        handler: (ctx) => {
          const repo = this.writable(ctx);
          const env = envOf(ctx, repo);
          this.environments.set(
            repo.fullName.toLowerCase(),
            this.list(repo).filter((e) => e !== env),
          );
          return { status: 204 };
        },
      },
      {
        method: 'GET',
        template: '/repos/{owner}/{repo}/environments/{environment_name}/deployment_protection_rules',
        handler: (ctx) => {
          const repo = this.state.repo(ctx, false);
          const env = envOf(ctx, repo);
          return { status: 200, body: { total_count: env.rules.length, custom_deployment_protection_rules: env.rules.map((r) => ruleJson(r, ctx.origin)) } };
        },
      },
      {
        method: 'GET',
        template: '/repos/{owner}/{repo}/environments/{environment_name}/deployment_protection_rules/apps',
        handler: (ctx) => {
          const repo = this.state.repo(ctx, false);
          envOf(ctx, repo);
          const apps = [...this.apps.values()].filter((a) => this.webhooks.installationFor(a.id, repo) !== undefined);
          return {
            status: 200,
            body: { total_count: apps.length, available_custom_deployment_protection_rule_integrations: apps.map((a) => appJson(a.id, ctx.origin)) },
          };
        },
      },
      {
        method: 'POST',
        template: '/repos/{owner}/{repo}/environments/{environment_name}/deployment_protection_rules',
        handler: (ctx) => {
          const repo = this.writable(ctx);
          const env = envOf(ctx, repo);
          const doc = `${RULES_DOC}#create-a-custom-deployment-protection-rule-on-an-environment`;
          if (typeof ctx.body !== 'object' || ctx.body === null || Array.isArray(ctx.body)) throw new ApiFailure(400, 'Problems parsing JSON');
          const id = (ctx.body as Record<string, unknown>).integration_id;
          if (id === undefined) throw validationFailed([{ resource: 'DeploymentProtectionRule', field: 'integration_id', code: 'missing_field' }], doc);
          if (typeof id !== 'number' || !Number.isSafeInteger(id))
            throw validationFailed([{ resource: 'DeploymentProtectionRule', field: 'integration_id', code: 'invalid' }], doc);
          if (!this.apps.has(id) || this.webhooks.installationFor(id, repo) === undefined) {
            throw validationFailed(
              [
                {
                  resource: 'DeploymentProtectionRule',
                  field: 'integration_id',
                  code: 'custom',
                  message: `The app ${id} is not installed on ${repo.fullName}.`,
                },
              ],
              doc,
            );
          }
          if (env.rules.some((r) => r.appId === id))
            throw validationFailed(
              [
                {
                  resource: 'DeploymentProtectionRule',
                  field: 'integration_id',
                  code: 'already_exists',
                  message: 'The app already protects this environment.',
                },
              ],
              doc,
            );
          const rule = { id: this.nextId++, appId: id };
          env.rules.push(rule);
          env.updatedAt = apiTime();
          return { status: 201, body: ruleJson(rule, ctx.origin) };
        },
      },
      {
        method: 'GET',
        template: '/repos/{owner}/{repo}/environments/{environment_name}/deployment_protection_rules/{protection_rule_id}',
        handler: (ctx) => {
          const repo = this.state.repo(ctx, false);
          return { status: 200, body: ruleJson(ruleOf(ctx, envOf(ctx, repo)), ctx.origin) };
        },
      },
      {
        method: 'DELETE',
        template: '/repos/{owner}/{repo}/environments/{environment_name}/deployment_protection_rules/{protection_rule_id}',
        handler: (ctx) => {
          const repo = this.writable(ctx);
          const env = envOf(ctx, repo);
          const rule = ruleOf(ctx, env);
          env.rules = env.rules.filter((r) => r !== rule);
          return { status: 204 };
        },
      },
      {
        method: 'POST',
        template: '/repos/{owner}/{repo}/actions/runs/{run_id}/deployment_protection_rule',
        handler: (ctx) => this.review(ctx),
      },
    ];
  }

  // ---- internals ----

  private list(repo: Repository): Environment[] {
    return this.environments.get(repo.fullName.toLowerCase()) ?? [];
  }

  private ensure(repoKey: string, name: string): Environment {
    const list = this.environments.get(repoKey) ?? [];
    let env = list.find((e) => e.name.toLowerCase() === name.toLowerCase());
    if (!env) {
      const now = apiTime();
      env = { id: this.nextId++, name, createdAt: now, updatedAt: now, rules: [] };
      list.push(env);
      this.environments.set(repoKey, list);
    }
    return env;
  }

  /** Writing environments and rules needs admin rights: a workflow token has none. */
  private writable(ctx: RequestContext): Repository {
    const repo = this.state.repo(ctx, true);
    if (ctx.identity.kind === 'workflow') throw new ApiFailure(403, 'Resource not accessible by integration', {}, ENV_DOC);
    return repo;
  }

  private envJson(repo: Repository, env: Environment, origin: string) {
    return {
      id: env.id,
      node_id: Buffer.from(`Environment:${env.id}`).toString('base64'),
      name: env.name,
      url: `${origin}/repos/${repo.fullName}/environments/${encodeURIComponent(env.name)}`,
      html_url: `${origin}/${repo.fullName}/deployments/activity_log?environments_filter=${encodeURIComponent(env.name)}`,
      created_at: env.createdAt,
      updated_at: env.updatedAt,
      can_admins_bypass: true,
      protection_rules: [],
      deployment_branch_policy: null,
    };
  }

  /** A deployment to a protected environment: it waits, and each rule's app is asked (deployment_protection_rule). */
  protected onStateEvent(event: StateEvent): void {
    if (event.name !== 'deployment') return;
    const env = this.list(event.repo).find((e) => e.name.toLowerCase() === event.deployment.environment.toLowerCase());
    if (!env || env.rules.length === 0) return;
    const runId = this.nextRun++;
    const callbackUrl = `${event.origin}/repos/${event.repo.fullName}/actions/runs/${runId}/deployment_protection_rule`;
    const record: Protected = {
      runId,
      repo: event.repo,
      deployment: event.deployment,
      environment: event.deployment.environment,
      callbackUrl,
      origin: event.origin,
      state: 'waiting',
      gates: [],
      reports: [],
      decisions: [],
    };
    this.runs.set(runId, record);
    this.state.addDeploymentStatus(event.repo, event.deployment, 'waiting', 'Waiting for deployment protection rules', event.sender, event.origin);
    for (const rule of env.rules) {
      const installation = this.webhooks.installationFor(rule.appId, event.repo);
      const gate: Gate = {
        appId: rule.appId,
        ruleId: rule.id,
        installationId: installation?.id ?? null,
        state: 'waiting',
        delivery: { reason: `app ${rule.appId} is not installed on ${event.repo.fullName}` },
      };
      record.gates.push(gate);
      if (!installation) continue;
      gate.delivery = this.webhooks.deliverToApp(
        rule.appId,
        'deployment_protection_rule',
        {
          action: 'requested',
          environment: record.environment,
          event: 'deployment',
          sha: event.deployment.sha,
          ref: event.deployment.ref,
          deployment: this.state.deploymentJson(event.repo, event.deployment, event.origin),
          deployment_callback_url: callbackUrl,
          pull_requests: [],
        },
        { repo: event.repo, origin: event.origin, installationId: installation.id, sender: event.sender },
      );
    }
  }

  /**
   * POST …/actions/runs/{run_id}/deployment_protection_rule, as the rule's app (an installation token of it):
   * `{environment_name, state, comment}` decides, `{environment_name, comment}` is a status report. 204.
   */
  private review(ctx: RequestContext): Reply {
    const repo = this.state.repo(ctx, true);
    if (ctx.identity.kind === 'workflow') throw new ApiFailure(403, 'Resource not accessible by integration', {}, REVIEW_DOC);
    if (ctx.identity.kind !== 'installation')
      throw new ApiFailure(
        403,
        'Resource not accessible by personal access token: only the app of a custom deployment protection rule can review it, with an installation access token',
        {},
        REVIEW_DOC,
      );
    const record = /^\d+$/.test(ctx.params.run_id!) ? this.runs.get(Number(ctx.params.run_id)) : undefined;
    if (!record || record.repo !== repo) throw new ApiFailure(404, 'Not Found', {}, REVIEW_DOC);
    // An app reviews only its own rules (GitHub's): another app's installation finds nothing here.
    const gate = record.gates.find((g) => g.appId === ctx.identity.appId);
    if (!gate) throw new ApiFailure(404, 'Not Found', {}, REVIEW_DOC);
    if (typeof ctx.body !== 'object' || ctx.body === null || Array.isArray(ctx.body)) throw new ApiFailure(400, 'Problems parsing JSON');
    const input = ctx.body as Record<string, unknown>;
    const errors: ValidationError[] = [];
    const resource = 'DeploymentProtectionRule';
    if (input.environment_name === undefined) errors.push({ resource, field: 'environment_name', code: 'missing_field' });
    else if (typeof input.environment_name !== 'string') errors.push({ resource, field: 'environment_name', code: 'invalid' });
    if (input.state !== undefined && input.state !== 'approved' && input.state !== 'rejected')
      errors.push({ resource, field: 'state', code: 'custom', message: 'state is not included in the list' });
    if (input.comment !== undefined && input.comment !== null && typeof input.comment !== 'string')
      errors.push({ resource, field: 'comment', code: 'invalid' });
    else if (typeof input.comment === 'string' && [...input.comment].length > MAX_COMMENT_CHARACTERS) {
      errors.push({ resource, field: 'comment', code: 'custom', message: `comment is too long (maximum is ${MAX_COMMENT_CHARACTERS} characters)` });
    }
    if (input.state === undefined && (typeof input.comment !== 'string' || input.comment === ''))
      errors.push({ resource, field: 'comment', code: 'missing_field', message: 'A status report (no state) needs a comment' });
    if (errors.length > 0) throw validationFailed(errors, REVIEW_DOC);
    if ((input.environment_name as string).toLowerCase() !== record.environment.toLowerCase()) {
      throw validationFailed(
        [
          {
            resource,
            field: 'environment_name',
            code: 'custom',
            message: `No deployment protection rule of this app is waiting on environment ${input.environment_name as string}`,
          },
        ],
        REVIEW_DOC,
      );
    }
    const comment = typeof input.comment === 'string' ? input.comment : null;
    const at = apiTime();
    if (gate.state !== 'waiting' || record.state !== 'waiting') {
      throw validationFailed(
        [
          {
            resource,
            field: 'state',
            code: 'custom',
            message: `This deployment protection rule has already been ${record.state === 'waiting' ? gate.state : record.state}`,
          },
        ],
        REVIEW_DOC,
      );
    }
    if (input.state === undefined) {
      if (record.reports.length >= MAX_STATUS_REPORTS) {
        throw validationFailed(
          [{ resource, field: 'comment', code: 'custom', message: `A deployment takes at most ${MAX_STATUS_REPORTS} status reports` }],
          REVIEW_DOC,
        );
      }
      record.reports.push({ app_id: gate.appId, comment: comment!, at });
      return { status: 204 };
    }
    const decision = input.state as 'approved' | 'rejected';
    gate.state = decision;
    record.decisions.push({ app_id: gate.appId, state: decision, comment, at });
    const creator = this.state.creator(ctx.identity);
    const said = comment ? `: ${comment.replace(/\s+/g, ' ').trim()}` : '';
    if (decision === 'rejected') {
      record.state = 'rejected';
      this.state.addDeploymentStatus(record.repo, record.deployment, 'failure', clip(`Rejected by app-${gate.appId}${said}`), creator, record.origin);
    } else if (record.gates.every((g) => g.state === 'approved')) {
      record.state = 'approved';
      this.state.addDeploymentStatus(record.repo, record.deployment, 'success', clip(`Approved by app-${gate.appId}${said}`), creator, record.origin);
    }
    return { status: 204 };
  }
}

function reportOf(p: Protected): ProtectedDeploymentReport {
  const settled = p.state === 'waiting' ? null : p.state === 'rejected' ? p.decisions.find((d) => d.state === 'rejected')! : p.decisions.at(-1)!;
  return {
    repository: p.repo.fullName,
    deployment_id: p.deployment.id,
    environment: p.environment,
    run_id: p.runId,
    deployment_callback_url: p.callbackUrl,
    state: p.state,
    rules: p.gates.map((g) => ({
      app_id: g.appId,
      rule_id: g.ruleId,
      installation_id: g.installationId,
      state: g.state,
      delivery_guid: 'guid' in g.delivery ? g.delivery.guid : null,
      not_delivered: 'reason' in g.delivery ? g.delivery.reason : null,
    })),
    reports: [...p.reports],
    decision: settled,
    decisions: [...p.decisions],
    statuses: p.deployment.statuses.map((s) => ({ state: s.state, description: s.description, created_at: s.created_at })),
  };
}

function ruleJson(rule: { id: number; appId: number }, origin: string) {
  return { id: rule.id, node_id: Buffer.from(`DeploymentProtectionRule:${rule.id}`).toString('base64'), enabled: true, app: appJson(rule.appId, origin) };
}

function appJson(id: number, origin: string) {
  return { id, slug: `app-${id}`, integration_url: `${origin}/apps/app-${id}`, node_id: Buffer.from(`App:${id}`).toString('base64') };
}

/** A deployment status's description holds 140 characters. */
function clip(text: string): string {
  const chars = [...text];
  return chars.length <= 140 ? text : `${chars.slice(0, 139).join('')}…`;
}
