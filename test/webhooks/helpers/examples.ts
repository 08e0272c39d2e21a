// Real webhook payloads for the tests: the example deliveries of @octokit/webhooks-examples (GitHub's, collected by
// the Octokit project), renamed into the specification's platform — the event names the spec renames
// (github_app_authorization → platform_app_authorization, dependabot_alert → dependency_alert) and GitHub's
// delivery headers (X-GitHub-* → X-Platform-*, GitHub-Hookshot/ → Platform-Hookshot/). The package holds payloads
// only (no headers), so each delivery gets the spec's headers here, with a GUID derived from the example's place.
import { createHash, randomUUID } from 'node:crypto';
import { sign as octokitSign } from '@octokit/webhooks-methods';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The examples for the hosted platform (api.github.com); the package's ghes-* folders are other products. */
export const examplesFile = require.resolve('@octokit/webhooks-examples/api.github.com/index.json');
export const examplesVersion = (JSON.parse(readFileSync(require.resolve('@octokit/webhooks-examples/package.json'), 'utf8')) as { version: string }).version;

/** GitHub's event names that the specification renames, and the platform's name for each. */
export const renamedEvents: Readonly<Record<string, string>> = Object.freeze({
  github_app_authorization: 'platform_app_authorization',
  dependabot_alert: 'dependency_alert',
});

export function platformEventName(githubName: string): string {
  return renamedEvents[githubName] ?? githubName;
}

/**
 * GitHub's delivery headers renamed into the specification's: `X-GitHub-<rest>` → `X-Platform-<rest>` (any case),
 * a `GitHub-Hookshot/` user agent → `Platform-Hookshot/`, an event name GitHub spells differently → the spec's;
 * the others (`X-Hub-Signature(-256)`, `Content-Type` …) are the same on both platforms.
 */
export function platformHeaders(githubHeaders: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(githubHeaders)) {
    const renamed = name.replace(/^x-github-/i, 'X-Platform-');
    let renamedValue = value;
    if (/^user-agent$/i.test(name)) renamedValue = value.replace(/^GitHub-Hookshot\//, 'Platform-Hookshot/');
    if (/^x-github-event$/i.test(name)) renamedValue = platformEventName(value);
    out[renamed] = renamedValue;
  }
  return out;
}

export interface ExampleDelivery {
  /** The event name as GitHub sends it (the package's name). */
  githubEvent: string;
  /** The specification's event name (`X-Platform-Event`). */
  event: string;
  /** The payload's `action`, if it has one. */
  action: string | undefined;
  /** `<event>#<n>`, the example's place in the package, for messages. */
  id: string;
  payload: Record<string, unknown>;
  /** The JSON body as the platform would send it (the bytes the signature covers). */
  body: Buffer;
  /** The spec's delivery headers (HOOK-HDR-*), without signatures (no secret here). */
  headers: Record<string, string>;
}

interface Definition {
  name: string;
  examples: Array<Record<string, unknown>>;
}

let cache: ExampleDelivery[] | undefined;

/** Every example delivery of the package, in its order; each call gets fresh copies of the payloads. */
export function exampleDeliveries(): ExampleDelivery[] {
  cache ??= (JSON.parse(readFileSync(examplesFile, 'utf8')) as Definition[]).flatMap((definition) =>
    definition.examples.map((payload, index) => {
      const event = platformEventName(definition.name);
      const body = Buffer.from(JSON.stringify(payload));
      const guid = guidFor(`${definition.name}#${index}`);
      const headers = platformHeaders({
        'X-GitHub-Hook-ID': '424242',
        'X-GitHub-Event': definition.name,
        'X-GitHub-Delivery': guid,
        'User-Agent': 'GitHub-Hookshot/7a5e2f1',
        'X-GitHub-Hook-Installation-Target-Type': 'repository',
        'X-GitHub-Hook-Installation-Target-ID': '186853002',
        'Content-Type': 'application/json',
        'Content-Length': String(body.length),
      });
      return {
        githubEvent: definition.name,
        event,
        action: typeof payload.action === 'string' ? payload.action : undefined,
        id: `${definition.name}#${index}`,
        payload,
        body,
        headers,
      };
    }),
  );
  return cache.map((delivery) => ({ ...delivery, payload: structuredClone(delivery.payload), headers: { ...delivery.headers } }));
}

/** A stable GUID (version-4 shaped) for a name, so a delivery's GUID is the same on every run. */
export function guidFor(name: string): string {
  const hex = createHash('sha256').update(name).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * A `deployment_protection_rule` delivery written from GitHub's documentation ("Webhook events and payloads",
 * deployment_protection_rule, action `requested`): the Octokit examples hold none. Its headers are GitHub's,
 * renamed by `platformHeaders` as any saved GitHub delivery would be.
 */
export function deploymentProtectionRuleDelivery(): {
  payload: Record<string, unknown>;
  body: Buffer;
  headers: Record<string, string>;
  githubHeaders: Record<string, string>;
} {
  const owner = { login: 'octo-org', id: 6811672, node_id: 'MDEyOk9yZ2FuaXphdGlvbjY4MTE2NzI=', type: 'Organization', site_admin: false };
  const sender = { login: 'octocat', id: 583231, node_id: 'MDQ6VXNlcjU4MzIzMQ==', type: 'User', site_admin: false };
  const payload: Record<string, unknown> = {
    action: 'requested',
    environment: 'production',
    event: 'push',
    sha: '6dcb09b5b57875f334f61aebed695e2e4193db5e',
    ref: 'refs/heads/main',
    deployment_callback_url: 'https://api.github.com/repos/octo-org/octo-repo/actions/runs/1234567890/deployment_protection_rule',
    deployment: {
      url: 'https://api.github.com/repos/octo-org/octo-repo/deployments/1',
      id: 1,
      node_id: 'MDEwOkRlcGxveW1lbnQx',
      sha: '6dcb09b5b57875f334f61aebed695e2e4193db5e',
      ref: 'main',
      task: 'deploy',
      payload: {},
      original_environment: 'production',
      environment: 'production',
      description: 'Deploy request from the workflow',
      creator: sender,
      created_at: '2026-11-20T10:00:00Z',
      updated_at: '2026-11-20T10:00:00Z',
      statuses_url: 'https://api.github.com/repos/octo-org/octo-repo/deployments/1/statuses',
      repository_url: 'https://api.github.com/repos/octo-org/octo-repo',
      transient_environment: false,
      production_environment: true,
    },
    pull_requests: [],
    repository: {
      id: 1296269,
      node_id: 'MDEwOlJlcG9zaXRvcnkxMjk2MjY5',
      name: 'octo-repo',
      full_name: 'octo-org/octo-repo',
      private: false,
      owner,
      default_branch: 'main',
    },
    organization: { login: 'octo-org', id: 6811672, node_id: 'MDEyOk9yZ2FuaXphdGlvbjY4MTE2NzI=' },
    installation: { id: 2311213, node_id: 'MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMjMxMTIxMw==' },
    sender,
  };
  const body = Buffer.from(JSON.stringify(payload));
  const githubHeaders = {
    'X-GitHub-Hook-ID': '292430182',
    'X-GitHub-Event': 'deployment_protection_rule',
    'X-GitHub-Delivery': guidFor('deployment_protection_rule#docs'),
    'User-Agent': 'GitHub-Hookshot/044aadd',
    'X-GitHub-Hook-Installation-Target-Type': 'integration',
    'X-GitHub-Hook-Installation-Target-ID': '79929171',
    'Content-Type': 'application/json',
    'Content-Length': String(body.length),
  };
  return { payload, body, headers: platformHeaders(githubHeaders), githubHeaders };
}

/** GitHub's placeholder user (`ghost`), as a `sender` carries it when no user can be resolved. */
export const ghostUser = Object.freeze({
  login: 'ghost',
  id: 10137,
  node_id: 'MDQ6VXNlcjEwMTM3',
  avatar_url: 'https://avatars.githubusercontent.com/u/10137?v=4',
  html_url: 'https://github.com/ghost',
  type: 'User',
  site_admin: false,
});

/** A minimal push delivery's payload with every property the catalogue requires of one. */
export const pushPayload = {
  ref: 'refs/heads/main',
  before: '0'.repeat(40),
  after: '1'.repeat(40),
  compare: 'https://platform.example/compare',
  base_ref: null,
  commits: [],
  created: false,
  deleted: false,
  forced: false,
  head_commit: null,
  pusher: { name: 'octo' },
  repository: { id: 1, full_name: 'gantry/demo' },
  sender: { login: 'octo' },
};

/** POSTs `pushPayload` to a receiver as the platform would: the spec's headers, signed with `secret` (by @octokit/webhooks-methods). */
export async function postPush(url: string, options: { secret: string; id?: string }): Promise<Response> {
  const body = JSON.stringify(pushPayload);
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'Platform-Hookshot/abc123',
      'x-platform-event': 'push',
      'x-platform-delivery': options.id ?? randomUUID(),
      'x-platform-hook-id': '42',
      'x-hub-signature-256': await octokitSign(options.secret, body),
    },
    body,
  });
}
