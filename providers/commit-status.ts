/**
 * CommitStatus: posts a commit status on the platform (`POST /repos/{owner}/{repo}/statuses/{sha}`) during the
 * deployment, typically with a `PageAnalysisGate`'s outputs (`state: gate.passed.apply((p) => p ? 'success' :
 * 'failure')`). Create posts the status; any input change posts a new one (statuses are append-only on the platform:
 * the newest status of a context is the commit's status for it). Delete removes the resource from the stack only: the
 * platform has no way to delete a status, so the posted statuses stay on the commit.
 *
 * The provider object below (made by `serializedProvider`, ./serialized.ts) is what Pulumi serializes into
 * `__provider`: its methods capture nothing and load the implementation (`commitStatusOperations`, through
 * `gantry/providers`) when the engine calls them. The token is read at run time from the plugin's environment
 * (GANTRY_PLATFORM_TOKEN, else PLATFORM_TOKEN) and never stored; the API address from PLATFORM_API_URL, else the
 * stack config gantry:platformApiUrl.
 */
import type * as pulumi from '@pulumi/pulumi';
import {
  commitStatusStates,
  createCommitStatus,
  maxStatusDescription,
  parseRepository,
  PlatformClient,
  type CommitStatusState,
} from '../lib/platform/index.js';
import { dynamicResource, type ArgsOf } from './resource.js';
import { runOnChangeOperations } from './run-on-change.js';
import { runOnChangeMethods, serializedProvider, type Operations, type ProviderSettings } from './serialized.js';

export interface CommitStatusInputs {
  /** `owner/repo`. */
  repository: string;
  /** The commit's sha (hexadecimal, 7 to 64 digits). */
  sha: string;
  /** The label that tells this status from others on the commit, e.g. `gantry/gate`. */
  context: string;
  state: CommitStatusState;
  /** At most 140 characters. */
  description?: string;
  /** An http(s) URL with the details. */
  targetUrl?: string;
}

export type CommitStatusArgs = ArgsOf<CommitStatusInputs>;

export interface CommitStatusOutputs extends CommitStatusInputs {
  /** The id of the newest status this resource posted (the resource's own id is the first one's). */
  statusId: number | null;
  /** The URL of the status on the platform. */
  url: string | null;
  createdAt: string | null;
}

// No delete: a status cannot be deleted on the platform. It stays on the commit; the plugin, finding no delete
// method, only lets the stack forget the resource.
const commitStatusProvider = serializedProvider('commitStatusOperations', {
  config: { platformApiUrl: 'gantry:platformApiUrl' },
  ...runOnChangeMethods,
});

export type CommitStatusSettings = ProviderSettings<typeof commitStatusProvider>;

const inputKeys = ['repository', 'sha', 'context', 'state', 'description', 'targetUrl'] as const;

export class CommitStatus extends dynamicResource<CommitStatusArgs, CommitStatusOutputs>(commitStatusProvider, {
  type: 'gantry:platform:CommitStatus',
  inputs: inputKeys,
  outputs: ['statusId', 'url', 'createdAt'],
}) {}

// ---- the implementation: not serialized; loaded in the plugin through `gantry/providers` ----

/** What is wrong with the program's values (as Check picked them: nothing is taken as typed yet). */
function problems(inputs: CommitStatusInputs): pulumi.dynamic.CheckFailure[] {
  const failures: pulumi.dynamic.CheckFailure[] = [];
  try {
    parseRepository('CommitStatus', inputs.repository);
  } catch {
    failures.push({ property: 'repository', reason: `repository must be "owner/repo", got ${JSON.stringify(inputs.repository) ?? 'nothing'}` });
  }
  if (typeof inputs.sha !== 'string' || !/^[0-9a-fA-F]{7,64}$/.test(inputs.sha)) {
    failures.push({ property: 'sha', reason: `sha must be a commit sha (7 to 64 hexadecimal digits), got ${JSON.stringify(inputs.sha) ?? 'nothing'}` });
  }
  if (typeof inputs.context !== 'string' || inputs.context.trim() === '') {
    failures.push({ property: 'context', reason: 'context must be a non-empty label such as "gantry/gate"' });
  }
  if (typeof inputs.state !== 'string' || !(commitStatusStates as readonly string[]).includes(inputs.state)) {
    failures.push({ property: 'state', reason: `state must be one of ${commitStatusStates.join(', ')}, got ${JSON.stringify(inputs.state) ?? 'nothing'}` });
  }
  if (inputs.description !== undefined) {
    if (typeof inputs.description !== 'string') failures.push({ property: 'description', reason: 'description must be a string' });
    else if ([...inputs.description].length > maxStatusDescription) {
      failures.push({
        property: 'description',
        reason: `description is ${[...inputs.description].length} characters; the platform takes at most ${maxStatusDescription}`,
      });
    }
  }
  if (inputs.targetUrl !== undefined) {
    let ok = false;
    try {
      const url = typeof inputs.targetUrl === 'string' ? new URL(inputs.targetUrl) : undefined;
      ok = url?.protocol === 'http:' || url?.protocol === 'https:';
    } catch {
      ok = false;
    }
    if (!ok) failures.push({ property: 'targetUrl', reason: 'targetUrl must be an http(s) URL' });
  }
  return failures;
}

async function post(settings: CommitStatusSettings | undefined, inputs: CommitStatusInputs): Promise<CommitStatusOutputs> {
  // The token comes from the plugin's environment (the client reads GANTRY_PLATFORM_TOKEN, then PLATFORM_TOKEN).
  const baseUrl = process.env.PLATFORM_API_URL || settings?.platformApiUrl;
  const client = new PlatformClient(baseUrl ? { baseUrl } : {});
  try {
    const status = await createCommitStatus(client, inputs);
    const { owner, repo } = parseRepository('CommitStatus', inputs.repository);
    const url = status.id === undefined ? null : `${client.baseUrl}/repos/${owner}/${repo}/statuses/${inputs.sha}`;
    return { ...inputs, statusId: status.id ?? null, url, createdAt: status.createdAt ?? null };
  } finally {
    client.close();
  }
}

// Statuses are append-only: an update posts a new status (the resource keeps its first id).
export const commitStatusOperations = runOnChangeOperations({
  keys: inputKeys,
  // A value not known yet (the gate's verdict in a preview) is checked once known.
  problems,
  run: post,
  idOf: (outs) => (outs.statusId === null ? `commitstatus-${Date.now()}` : String(outs.statusId)),
}) satisfies Operations<typeof commitStatusProvider, CommitStatusInputs, CommitStatusOutputs>;
