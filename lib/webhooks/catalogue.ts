// The webhook event catalogue, as data: every event of the specification's Events table (../shared/spec/
// 002_ad00ac411f4313b1.txt, "## Events") with its availability, permission and notes, and the top-level properties
// of its payload (§C "Webhooks": the common properties with their requiredness exceptions, and the event-specific
// table), plus GitHub's `ping`, which the specification does not describe. `checkPayload` (payload.ts) reads it;
// test/webhooks/catalogue.test.ts holds it to the specification's text.
//
// What the specification does not show is left out, never guessed: `gollum`'s availability, permission and own
// properties, the allowed `action` values, the contents of the nested objects, and the events it leaves out
// ("between `gollum` and `projects_v2_item`", "after `sub_issues`"), which are accepted as unknown.
import { expectString } from '../arguments.js';

/** The webhook types an event is available to (HOOK-WEBHOOK-TYPES): the spec's letters R, O, A, E, S. */
export type WebhookType = 'repositories' | 'organizations' | 'apps' | 'enterprises' | 'sponsored accounts';

/** The spec's availability letters and the webhook type each stands for. */
export const webhookTypeLetters: Readonly<Record<'R' | 'O' | 'A' | 'E' | 'S', WebhookType>> = Object.freeze({
  R: 'repositories',
  O: 'organizations',
  A: 'apps',
  E: 'enterprises',
  S: 'sponsored accounts',
});

/** A top-level property's type, in the specification's words. */
export type PropertyType =
  'object' | 'object or null' | 'string' | 'string or null' | 'integer' | 'number' | 'boolean' | 'array of objects' | 'array of strings or null';

export interface WebhookProperty {
  readonly name: string;
  /** The type, or null where the specification names the property without one (`deployment_review`'s optional ones). */
  readonly type: PropertyType | null;
  /** Required in every payload of the event. */
  readonly required: boolean;
  /** Required only when the payload's `action` is one of these (optional otherwise). */
  readonly requiredForActions?: readonly string[];
  /** One of the common properties (`enterprise`, `installation`, `organization`, `repository`, `sender`). */
  readonly common: boolean;
  /** The only values the specification allows. */
  readonly oneOf?: readonly string[];
  /** The most entries an array may hold. */
  readonly maxItems?: number;
  /** Where the requiredness or type comes from when it is not plain from the tables (a choice, an ambiguity). */
  readonly note?: string;
}

export interface WebhookEvent {
  /** The event name, as in the `X-Platform-Event` header. */
  readonly name: string;
  /** False for `ping`, which the specification does not describe (GitHub's documented event). */
  readonly specified: boolean;
  /** The webhook types it is available to; null where the specification does not show them (`gollum`). */
  readonly availability: readonly WebhookType[] | null;
  /** The permission an app needs read access to (HOOK-PERMISSION-READ); null when none is listed or not shown. */
  readonly permission: string | null;
  /** The Notes column, verbatim; null when empty. */
  readonly notes: string | null;
  /** The top-level properties: the event's own and the five common ones, each with its requiredness for this event. */
  readonly properties: readonly WebhookProperty[];
  /** What the specification says it does not show about this event (`availability`, `permission`, `properties`). */
  readonly notShown: readonly ('availability' | 'permission' | 'properties')[];
}

// --- payload types of the events Gantry acts on ---------------------------------------------------------------
// The specification gives only the top-level properties; the contents of nested objects are "not shown" there, so
// the fields below come from the platform's (GitHub's) documentation. Each nested type keeps an index signature:
// a payload carries more than Gantry reads.

/** A user or organization account (`sender`, `pusher`, creators). `login` is `ghost` for the placeholder user. */
export interface PlatformAccount {
  login: string;
  id: number;
  type?: string;
  [key: string]: unknown;
}

export interface PlatformInstallationRef {
  id: number;
  node_id?: string;
  [key: string]: unknown;
}

export interface PlatformRepository {
  id: number;
  name: string;
  full_name: string;
  owner: PlatformAccount;
  private?: boolean;
  html_url?: string;
  default_branch?: string;
  [key: string]: unknown;
}

/** The common properties (HOOK-COMMON-PROPS); which are present depends on the event. */
export interface CommonPayload {
  enterprise?: Record<string, unknown>;
  installation?: PlatformInstallationRef;
  organization?: Record<string, unknown>;
  repository?: PlatformRepository;
  sender?: PlatformAccount;
}

export interface PlatformDeployment {
  id: number;
  url?: string;
  sha: string;
  ref: string;
  task?: string;
  environment: string;
  original_environment?: string;
  description?: string | null;
  creator?: PlatformAccount;
  created_at?: string;
  updated_at?: string;
  statuses_url?: string;
  payload?: unknown;
  [key: string]: unknown;
}

export interface PlatformPullRequestRef {
  id: number;
  number: number;
  url?: string;
  head?: { ref: string; sha: string; [key: string]: unknown };
  base?: { ref: string; sha: string; [key: string]: unknown };
  [key: string]: unknown;
}

/**
 * `deployment_protection_rule` (HOOK-EV-DEPLOYMENT-PROTECTION-RULE): every property is optional in the
 * specification, `repository` and `sender` included; Gantry needs `environment`, `deployment_callback_url` and
 * `installation.id` to answer, and says so when one is missing.
 */
export interface DeploymentProtectionRulePayload extends CommonPayload {
  action?: string;
  environment?: string;
  event?: string;
  sha?: string;
  ref?: string;
  deployment_callback_url?: string;
  deployment?: PlatformDeployment | null;
  pull_requests?: PlatformPullRequestRef[];
}

export interface PlatformDeploymentStatus {
  id: number;
  state: string;
  environment?: string;
  environment_url?: string;
  target_url?: string;
  log_url?: string;
  description?: string | null;
  creator?: PlatformAccount;
  created_at?: string;
  updated_at?: string;
  [key: string]: unknown;
}

/** `deployment_status` (HOOK-EV-DEPLOYMENT-STATUS). */
export interface DeploymentStatusPayload extends CommonPayload {
  action?: string;
  deployment: PlatformDeployment;
  deployment_status: PlatformDeploymentStatus;
  check_run?: Record<string, unknown> | null;
  workflow?: Record<string, unknown> | null;
  workflow_run?: Record<string, unknown> | null;
  repository: PlatformRepository;
  sender: PlatformAccount;
}

export interface PlatformCommit {
  id: string;
  message: string;
  timestamp: string;
  url?: string;
  added?: string[];
  removed?: string[];
  modified?: string[];
  [key: string]: unknown;
}

/** `push` (HOOK-EV-PUSH): `sender` is optional there. */
export interface PushPayload extends CommonPayload {
  after: string;
  before: string;
  compare: string;
  ref: string;
  base_ref: string | null;
  commits: PlatformCommit[];
  created: boolean;
  deleted: boolean;
  forced: boolean;
  head_commit: PlatformCommit | null;
  pusher: { name: string; email?: string | null; [key: string]: unknown };
  repository: PlatformRepository;
}

/** `status` (HOOK-EV-STATUS): a commit status was created. */
export interface StatusPayload extends CommonPayload {
  avatar_url?: string | null;
  /** At most 10; each contains the commit, not necessarily as its head. */
  branches: Array<{ name: string; commit: { sha: string; [key: string]: unknown }; [key: string]: unknown }>;
  commit: { sha: string; [key: string]: unknown };
  context: string;
  created_at: string;
  name: string;
  updated_at: string;
  sha: string;
  description: string | null;
  id: number;
  state: 'error' | 'failure' | 'pending' | 'success';
  target_url: string | null;
  repository: PlatformRepository;
  sender: PlatformAccount;
}

/**
 * `ping`: not in the specification (its Events table leaves out the events between `gollum` and
 * `projects_v2_item`, where GitHub documents `ping`). GitHub sends it when a webhook is created: `zen` (a random
 * aphorism), `hook_id` and `hook` (the webhook's configuration; `hook.app_id` for an app's webhook).
 */
export interface PingPayload extends CommonPayload {
  zen: string;
  hook_id: number;
  hook: { id: number; type: string; active: boolean; events: string[]; config: Record<string, unknown>; app_id?: number; [key: string]: unknown };
}

/** The payload type of each event Gantry acts on. */
export interface WebhookPayloads {
  deployment_protection_rule: DeploymentProtectionRulePayload;
  deployment_status: DeploymentStatusPayload;
  push: PushPayload;
  status: StatusPayload;
  ping: PingPayload;
}

// --- the common properties and their requiredness (§C "Webhooks", first paragraph) ----------------------------

const commonNames = ['enterprise', 'installation', 'organization', 'repository', 'sender'] as const;

/**
 * The requiredness of the common properties: `repository` and `sender` required in most events
 * (HOOK-REQ-DEFAULT), with the specification's exceptions (HOOK-REQ-REPOSITORY-OPTIONAL, HOOK-REQ-SENDER-OPTIONAL,
 * HOOK-REQ-ORGANIZATION-REQUIRED, HOOK-REQ-INSTALLATION-REQUIRED), and one choice of Gantry's:
 * `repositoryOptionalByChoice` — the events AMB-28 names as having no repository scope, whose real payloads carry
 * no `repository` (GitHub's `github_app_authorization` and `projects_v2_item` examples have none).
 */
export const commonRequiredness = Object.freeze({
  repositoryOptionalIn: Object.freeze([
    'registry_package',
    'repository_ruleset',
    'secret_scanning_scan',
    'security_advisory',
    'sponsorship',
    'deployment_protection_rule',
  ]),
  repositoryOptionalByChoice: Object.freeze(['custom_property', 'projects_v2_item', 'projects_v2_status_update', 'platform_app_authorization']),
  senderOptionalIn: Object.freeze([
    'custom_property',
    'custom_property_values',
    'pull_request_review_thread',
    'push',
    'repository_advisory',
    'secret_scanning_alert',
    'secret_scanning_scan',
    'security_advisory',
    'security_and_analysis',
    'deployment_protection_rule',
  ]),
  organizationRequiredIn: Object.freeze(['custom_property_values', 'deployment_review', 'projects_v2_item', 'projects_v2_status_update']),
  installationRequiredIn: Object.freeze(['repository_dispatch']),
});

// --- the events ------------------------------------------------------------------------------------------------

/** An event-specific property as written in the table: `[type, 'R' | 'optional', extra]`. */
type Own = readonly [PropertyType | null, 'R' | 'optional', Partial<Pick<WebhookProperty, 'requiredForActions' | 'oneOf' | 'maxItems' | 'note'>>?];

interface Row {
  name: string;
  availability: string | null;
  permission: string | null;
  notes?: string;
  own?: Record<string, Own>;
  notShown?: WebhookEvent['notShown'];
}

const R = 'R' as const;
const opt = 'optional' as const;
const ROA = 'R O A';

// One row per row of the Events table, in its order; `own` is the event's row of the properties table.
const rows: Row[] = [
  {
    name: 'branch_protection_configuration',
    availability: ROA,
    permission: 'Administration (repository)',
    notes: 'all branch protections were disabled',
    own: {},
  },
  { name: 'branch_protection_rule', availability: ROA, permission: 'Administration (repository)', own: { rule: ['object', R] } },
  {
    name: 'check_run',
    availability: ROA,
    permission: 'Checks (repository)',
    notes:
      '`rerequested` and `requested_action` types need write level; apps with write level are auto-subscribed; repository and organization webhooks get only `created` and `completed`; pushes in forks are not detected (empty `pull_requests` array, null `head_branch`)',
    own: { check_run: ['object', R], action: ['string', opt] },
  },
  {
    name: 'check_suite',
    availability: ROA,
    permission: 'Checks',
    notes:
      '`requested` and `rerequested` need write level; auto-subscribed with write; repository and organization webhooks get only `completed`; same fork behavior',
    own: { check_suite: ['object', R] },
  },
  {
    name: 'code_scanning_alert',
    availability: ROA,
    permission: 'Code scanning alerts',
    own: { alert: ['object', R], commit_oid: ['string', R], ref: ['string', R] },
  },
  { name: 'commit_comment', availability: ROA, permission: 'Contents', own: { comment: ['object', R] } },
  {
    name: 'create',
    availability: ROA,
    permission: 'Contents',
    notes: 'branch or tag created',
    own: { description: ['string or null', R], master_branch: ['string', R], pusher_type: ['string', R], ref: ['string', R], ref_type: ['string', R] },
  },
  { name: 'custom_property', availability: 'E O A', permission: 'Custom properties (organization)', own: { definition: ['object', R] } },
  {
    name: 'custom_property_values',
    availability: ROA,
    permission: 'Custom properties (organization)',
    own: { new_property_values: ['array of objects', R], old_property_values: ['array of objects', R] },
  },
  {
    name: 'delete',
    availability: ROA,
    permission: 'Contents',
    notes: 'branch or tag deleted',
    own: { pusher_type: ['string', R], ref: ['string', R], ref_type: ['string', R] },
  },
  { name: 'dependency_alert', availability: ROA, permission: 'Dependency alerts', own: { alert: ['object', R] } },
  { name: 'deploy_key', availability: ROA, permission: 'Deployments', own: { key: ['object', R] } },
  {
    name: 'deployment',
    availability: ROA,
    permission: 'Deployments',
    own: { deployment: ['object', R], workflow: ['object or null', R], workflow_run: ['object or null', R] },
  },
  {
    name: 'deployment_protection_rule',
    availability: 'A',
    permission: 'Deployments',
    own: {
      environment: ['string', opt],
      event: ['string', opt],
      sha: ['string', opt],
      ref: ['string', opt],
      deployment_callback_url: ['string', opt],
      deployment: ['object or null', opt],
      pull_requests: ['array of objects', opt],
    },
  },
  {
    name: 'deployment_review',
    availability: 'A',
    permission: 'Deployments',
    own: {
      approver: [null, opt],
      comment: [null, opt],
      reviewers: [null, opt],
      workflow_job_run: [null, opt],
      workflow_job_runs: [null, opt],
      since: ['string', R],
      workflow_run: ['object or null', R],
    },
  },
  {
    name: 'deployment_status',
    availability: ROA,
    permission: 'Deployments',
    notes: 'not fired for statuses in an inactive state',
    own: {
      deployment: ['object', R],
      deployment_status: ['object', R],
      check_run: ['object or null', opt],
      workflow: ['object or null', opt],
      workflow_run: ['object or null', opt],
    },
  },
  {
    name: 'discussion',
    availability: ROA,
    permission: 'Discussions',
    notes: 'public preview, subject to change',
    own: { discussion: ['object', R], answer: ['object', opt, { requiredForActions: ['answered'] }] },
  },
  {
    name: 'discussion_comment',
    availability: ROA,
    permission: 'Discussions',
    notes: 'public preview',
    own: { comment: ['object', R], discussion: ['object', R] },
  },
  { name: 'fork', availability: 'E R O A', permission: 'Contents', own: { forkee: ['object', R] } },
  {
    name: 'platform_app_authorization',
    availability: 'A',
    permission: null,
    notes: 'sent by default to the app, cannot be unsubscribed; occurs when a user revokes authorization of an app (the installation remains)',
    own: { sender: ['object', R] },
  },
  { name: 'gollum', availability: null, permission: null, notes: 'wiki page created or updated', notShown: ['availability', 'permission', 'properties'] },
  {
    name: 'projects_v2_item',
    availability: 'O',
    permission: 'Projects (organization)',
    notes: 'public preview',
    own: { changes: ['object', R], projects_v2_item: ['object', R] },
  },
  { name: 'projects_v2_status_update', availability: 'O', permission: 'Projects (organization)', own: { projects_v2_status_update: ['object', R] } },
  { name: 'public', availability: ROA, permission: 'Metadata', notes: 'repository changed from private to public', own: {} },
  {
    name: 'pull_request',
    availability: ROA,
    permission: 'Pull requests',
    own: {
      number: ['integer', R],
      pull_request: ['object', R],
      assignee: [
        'object or null',
        opt,
        { requiredForActions: ['assigned', 'unassigned'], note: 'the specification says "(assignment actions)"; the platform\'s are assigned and unassigned' },
      ],
    },
  },
  { name: 'pull_request_review', availability: ROA, permission: 'Pull requests', own: { pull_request: ['object', R], review: ['object', R] } },
  { name: 'pull_request_review_comment', availability: ROA, permission: 'Pull requests', own: { comment: ['object', R], pull_request: ['object', R] } },
  {
    name: 'pull_request_review_thread',
    availability: ROA,
    permission: 'Pull requests',
    own: { pull_request: ['object', R], thread: ['object', R], updated_at: ['string or null', opt] },
  },
  {
    name: 'push',
    availability: ROA,
    permission: 'Contents',
    notes: 'commit or tag push, branch or tag deletion, repository created from template',
    own: {
      after: ['string', R],
      before: ['string', R],
      compare: ['string', R],
      ref: ['string', R],
      base_ref: ['string or null', R],
      commits: ['array of objects', R],
      created: ['boolean', R],
      deleted: ['boolean', R],
      forced: ['boolean', R],
      head_commit: ['object or null', R],
      pusher: ['object', R],
      repository: ['object', R],
    },
  },
  { name: 'registry_package', availability: ROA, permission: 'Packages', notes: 'newer `package` event recommended', own: { registry_package: ['object', R] } },
  { name: 'release', availability: ROA, permission: 'Contents', own: { release: ['object', R] } },
  { name: 'repository', availability: 'E R O A', permission: 'Metadata', own: {} },
  { name: 'repository_advisory', availability: ROA, permission: 'Repository security advisories', own: { repository_advisory: ['object', R] } },
  {
    name: 'repository_dispatch',
    availability: 'A',
    permission: 'Contents',
    notes: 'occurs on a dispatch POST request; `action` equals its `event_type`',
    own: {
      action: ['string', R, { note: 'the `event_type` sent in the dispatch request' }],
      branch: ['string', R],
      client_payload: ['object or null', R],
    },
  },
  { name: 'repository_import', availability: 'R O', permission: null, own: { status: ['string', R] } },
  { name: 'repository_ruleset', availability: ROA, permission: 'Administration (repository or organization)', own: { repository_ruleset: ['object', R] } },
  {
    name: 'repository_vulnerability_alert',
    availability: 'R O',
    permission: null,
    notes: 'closing down; use `dependency_alert`',
    own: { alert: ['object', R] },
  },
  { name: 'secret_scanning_alert', availability: ROA, permission: 'Secret scanning alerts', own: { alert: ['object', R], assignee: ['object', opt] } },
  { name: 'secret_scanning_alert_location', availability: ROA, permission: 'Secret scanning alerts', own: { alert: ['object', R], location: ['object', R] } },
  {
    name: 'secret_scanning_scan',
    availability: ROA,
    permission: 'Secret scanning alerts',
    notes: 'scan may come from a custom pattern update, a push or partner pattern updates',
    own: {
      type: ['string', R],
      source: ['string', R],
      started_at: ['string', R, { note: 'ISO 8601' }],
      completed_at: ['string', R, { note: 'ISO 8601' }],
      secret_types: ['array of strings or null', opt],
      custom_pattern_name: ['string or null', opt],
      custom_pattern_scope: ['string or null', opt],
    },
  },
  { name: 'security_advisory', availability: 'A', permission: null, notes: 'global reviewed advisories', own: { security_advisory: ['object', R] } },
  { name: 'security_and_analysis', availability: ROA, permission: 'Administration (repository)', own: { changes: ['object', R] } },
  {
    name: 'sponsorship',
    availability: 'S',
    permission: null,
    notes: 'hosted platform only; cancellation event only for recurring sponsorships',
    own: { sponsorship: ['object', R] },
  },
  { name: 'star', availability: ROA, permission: 'Metadata', own: { starred_at: ['string or null', R, { note: 'ISO 8601' }] } },
  {
    name: 'status',
    availability: ROA,
    permission: 'Commit statuses',
    own: {
      avatar_url: ['string or null', opt],
      branches: ['array of objects', R, { maxItems: 10, note: 'each contains the SHA, not necessarily as head' }],
      commit: ['object', R],
      context: ['string', R],
      created_at: ['string', R],
      name: ['string', R],
      updated_at: ['string', R],
      sha: ['string', R],
      description: ['string or null', R],
      id: ['integer', R],
      state: ['string', R, { oneOf: ['error', 'failure', 'pending', 'success'] }],
      target_url: ['string or null', R],
    },
  },
  {
    name: 'sub_issues',
    availability: ROA,
    permission: 'Issues',
    own: {
      sub_issue_id: ['number', R],
      sub_issue: ['object', R],
      parent_issue_id: ['number', opt],
      parent_issue: ['object', opt],
      parent_issue_repo: ['object', opt],
    },
  },
];

/** `ping`, from GitHub's documentation (the specification does not show it): `zen`, `hook_id`, `hook`. */
const ping: Row = {
  name: 'ping',
  availability: null,
  permission: null,
  notes: "not in the specification: GitHub's documented event, sent when a webhook is created",
  own: { zen: ['string', R], hook_id: ['integer', R], hook: ['object', R] },
};

function commonProperty(event: string, name: (typeof commonNames)[number], specified: boolean): WebhookProperty {
  const base = { name, type: 'object' as const, common: true };
  if (!specified) return { ...base, required: false, note: 'not in the specification; GitHub documents it as optional in ping' };
  switch (name) {
    case 'repository':
      if (commonRequiredness.repositoryOptionalIn.includes(event)) return { ...base, required: false };
      if (commonRequiredness.repositoryOptionalByChoice.includes(event)) {
        return { ...base, required: false, note: 'AMB-28: an event with no repository scope; Gantry does not require it' };
      }
      return { ...base, required: true };
    case 'sender':
      return { ...base, required: !commonRequiredness.senderOptionalIn.includes(event) };
    case 'organization':
      return { ...base, required: commonRequiredness.organizationRequiredIn.includes(event) };
    case 'installation':
      return { ...base, required: commonRequiredness.installationRequiredIn.includes(event) };
    default:
      return { ...base, required: false };
  }
}

function build(row: Row, specified: boolean): WebhookEvent {
  const own = Object.entries(row.own ?? {}).map(([name, [type, requiredness, extra]]): WebhookProperty => ({
    name,
    type,
    required: requiredness === R,
    common: (commonNames as readonly string[]).includes(name),
    ...extra,
  }));
  const ownNames = new Set(own.map((property) => property.name));
  // A common property the event's row names again (push's `repository`, platform_app_authorization's `sender`)
  // takes the row's requiredness, which says it outright.
  const common = commonNames.filter((name) => !ownNames.has(name)).map((name) => commonProperty(row.name, name, specified));
  const properties = [...own, ...common].map((property) => Object.freeze({ ...property }));
  return Object.freeze({
    name: row.name,
    specified,
    availability:
      row.availability === null
        ? null
        : Object.freeze(row.availability.split(' ').map((letter) => webhookTypeLetters[letter as keyof typeof webhookTypeLetters])),
    permission: row.permission,
    notes: row.notes ?? null,
    properties: Object.freeze(properties),
    notShown: Object.freeze([...(row.notShown ?? [])]),
  });
}

/**
 * Every event of the specification's Events table (46, in its order), then `ping` (`specified: false`), which the
 * specification does not show but the platform sends when a webhook is created.
 */
export const webhookEvents: readonly WebhookEvent[] = Object.freeze([...rows.map((row) => build(row, true)), build(ping, false)]);

const byName = new Map(webhookEvents.map((event) => [event.name, event]));

/** The catalogue's entry for an event name (`push`, `deployment_protection_rule` …), or undefined for an unknown one. */
export function eventNamed(name: string): WebhookEvent | undefined {
  expectString('eventNamed', 'name', name, 'an event name such as "push"');
  return byName.get(name);
}
