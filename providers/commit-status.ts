/**
 * CommitStatus: posts a commit status on the platform (`POST /repos/{owner}/{repo}/statuses/{sha}`) during the
 * deployment, typically with a `PageAnalysisGate`'s outputs (`state: gate.passed.apply((p) => p ? 'success' :
 * 'failure')`). Create posts the status; any input change posts a new one (statuses are append-only on the platform:
 * the newest status of a context is the commit's status for it). Delete removes the resource from the stack only: the
 * platform has no way to delete a status, so the posted statuses stay on the commit.
 *
 * The provider object below (made by `resourceType` with `serializedProvider`, ./serialized.ts) is what Pulumi
 * serializes into `__provider`: its methods capture nothing and load the implementation (`commitStatusOperations`,
 * through `gantry/providers`) when the engine calls them. The token is read at run time from the plugin's environment
 * (GANTRY_PLATFORM_TOKEN, else PLATFORM_TOKEN) and never stored; the API address from PLATFORM_API_URL, else the
 * stack config gantry:platformApiUrl.
 */
import type { CommitStatusState } from '../lib/platform/index.js';
import { resourceType, type ArgsOf } from './resource.js';
import { runOnChangeMethods, type ProviderSettings } from './serialized.js';

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
export const commitStatus = resourceType<CommitStatusInputs, CommitStatusOutputs>()({
  type: 'gantry:platform:CommitStatus',
  operations: 'commitStatusOperations',
  inputs: ['repository', 'sha', 'context', 'state', 'description', 'targetUrl'],
  outputs: ['statusId', 'url', 'createdAt'],
  config: { platformApiUrl: 'gantry:platformApiUrl' },
  ...runOnChangeMethods,
});

export class CommitStatus extends commitStatus.Resource {}

export const { provider: commitStatusProvider, inputKeys, operations: commitStatusOperations } = commitStatus;

export type CommitStatusSettings = ProviderSettings<typeof commitStatusProvider>;
